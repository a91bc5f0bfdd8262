//! What a network grant does not give: a unix socket behind a path (the ssh agent's, a
//! local service's), a listening socket on any address, other socket families; and what a
//! command without the grant does not see: the host's network state in `/proc/net`.

use std::os::unix::net::UnixListener;

use ybs_tools::ShellPolicy;

use crate::common::Fixture;

fn granted() -> Fixture {
    Fixture::with_policy(ShellPolicy {
        network_allowed: true,
        ..ShellPolicy::default()
    })
}

/// The attack: with `network: true` the command connected to the ssh agent's socket and
/// had it sign with the user's key. A listener stands in for the agent, inside the project
/// (where every file right is granted), so only the socket rules can stop it.
#[test]
fn a_network_grant_reaches_no_unix_socket_by_path() {
    let f = granted();
    let before = f.snapshot_outside();
    let agent = f.root.join("agent.sock");
    let listener = UnixListener::bind(&agent).unwrap();
    listener.set_nonblocking(true).unwrap();
    let result = f.shell(
        "curl -sS --max-time 5 --unix-socket agent.sock http://agent/sign; echo \"curl=$?\"; \
         perl -MSocket -e 'socket(my $s, AF_UNIX, SOCK_STREAM, 0) or die \"socket: $!\\n\"; \
         connect($s, pack_sockaddr_un(\"agent.sock\")) or die \"connect: $!\\n\"; print \"connected\\n\"'",
        true,
    );
    let text = result.to_string();
    assert!(!text.contains("connected\\n"), "{result}");
    assert!(!text.contains("curl=0"), "{result}");
    assert!(
        (result["stderr"].as_str().unwrap()).contains("socket: Operation not permitted"),
        "{result}"
    );
    assert!(
        listener.accept().is_err(),
        "the command reached the unix socket"
    );
    assert_eq!(std::fs::metadata(&agent).map(|m| m.len()).ok(), Some(0));
    assert_eq!(
        f.snapshot_outside(),
        before,
        "something outside the root changed"
    );
    crate::loopback::unix_datagrams_stay_home(&f, true);
}

/// The attack: a command granted the network listened on `0.0.0.0` and served the project.
#[test]
fn a_network_grant_does_not_listen_on_any_address() {
    let f = granted();
    for address in ["0.0.0.0", "127.0.0.1", "::"] {
        let family = if address.contains(':') {
            "AF_INET6"
        } else {
            "AF_INET"
        };
        let script = format!(
            "perl -MSocket=:all -e 'socket(my $s, {family}, SOCK_STREAM, 0) or die \"socket: $!\\n\"; \
             my ($e, $a) = getaddrinfo(\"{address}\", 0, {{flags => AI_NUMERICHOST}}); \
             my $addr = $a->{{addr}}; bind($s, $addr) or die \"bind: $!\\n\"; \
             listen($s, 5) or die \"listen: $!\\n\"; print \"listening\\n\"'"
        );
        let result = f.shell(&script, true);
        assert!(
            !result["stdout"].as_str().unwrap().contains("listening"),
            "{address}: {result}"
        );
        assert!(
            (result["stderr"].as_str().unwrap()).contains("bind: Operation not permitted"),
            "{address}: {result}"
        );
    }
    // Other families stay closed with the grant (netlink shows the host's interfaces).
    let result = f.shell(
        "perl -MSocket -e 'socket(my $s, 16, SOCK_RAW, 0) or die \"netlink: $!\\n\"; print \"open\\n\"'",
        true,
    );
    assert!(
        (result["stderr"].as_str().unwrap()).contains("netlink: Operation not permitted"),
        "{result}"
    );
}

/// The attack: without the network, `/proc/net/tcp` and `/proc/net/unix` listed the host's
/// connections and sockets.
#[test]
fn without_the_network_the_hosts_network_state_is_not_visible() {
    let f = Fixture::new();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let socket_path = f.outside.join("host-service.sock");
    let _unix = UnixListener::bind(&socket_path).unwrap();
    let result = f.shell(
        "cat /proc/net/tcp /proc/net/unix /proc/self/net/tcp 2>&1; echo done",
        false,
    );
    let stdout = result["stdout"].as_str().unwrap();
    assert!(stdout.contains("done"), "{result}");
    let hex_port = format!(":{port:04X}");
    assert!(
        !stdout.contains(&hex_port),
        "the host's listener is visible: {stdout}"
    );
    assert!(
        !stdout.contains("host-service.sock"),
        "the host's unix socket is visible: {stdout}"
    );
}
