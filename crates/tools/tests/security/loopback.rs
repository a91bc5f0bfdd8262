//! The session's loopback network: a server that a command without the network starts (a
//! background job's dev server) answers the commands after it on 127.0.0.1, while from that
//! network nothing of the host is reachable (its listeners, its unix sockets, its
//! interfaces) and the host does not reach the server either.

use std::net::{TcpListener, TcpStream, UdpSocket};
use std::os::unix::net::UnixListener;
use std::time::Duration;

use serde_json::json;
use ybs_tools::ShellPolicy;

use crate::common::Fixture;

/// A port nothing on the host listens on.
fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// Fetches `path` from the server on `port`, trying for up to ten seconds while it starts.
fn fetch(port: u16, path: &str) -> String {
    format!(
        "for i in $(seq 100); do curl -sS --max-time 2 http://127.0.0.1:{port}/{path} && exit 0; \
         sleep 0.1; done; exit 1"
    )
}

#[test]
fn a_server_started_in_the_background_answers_the_next_command_and_nobody_else() {
    let f = Fixture::with_policy(ShellPolicy {
        network_allowed: true,
        ..ShellPolicy::default()
    });
    let before = f.snapshot_outside();
    std::fs::write(f.root.join("page.html"), "served by the job\n").unwrap();
    let port = free_port();
    let started = f
        .call(
            "run_shell",
            json!({"command": format!("exec python3 -m http.server {port} --bind 127.0.0.1"), "background": true}),
        )
        .unwrap();
    let job = started["job_id"].as_u64().unwrap();

    let fetched = f.shell(&fetch(port, "page.html"), false);
    assert_eq!(fetched["exit_code"], 0, "{fetched}");
    assert_eq!(fetched["stdout"], "served by the job\n", "{fetched}");
    // Another command reaches the same server: the network is the session's.
    let again = f.shell(&fetch(port, "page.html"), false);
    assert_eq!(again["stdout"], "served by the job\n", "{again}");

    // The host does not reach it: nothing listens on its own 127.0.0.1 at that port.
    assert!(
        TcpStream::connect_timeout(&([127, 0, 0, 1], port).into(), Duration::from_secs(2)).is_err(),
        "the job's server is reachable from the host"
    );
    // Nor does a command granted the network: it runs on the host's network.
    let granted = f.shell(
        &format!("curl -sS --max-time 3 http://127.0.0.1:{port}/page.html; echo \"curl=$?\""),
        true,
    );
    assert!(
        !granted["stdout"]
            .as_str()
            .unwrap()
            .contains("served by the job"),
        "{granted}"
    );

    let stopped = f.call("stop_job", json!({"job_id": job})).unwrap();
    assert_eq!(stopped["running"], false, "{stopped}");
    let after = f.shell(
        &format!("curl -sS --max-time 2 http://127.0.0.1:{port}/page.html; echo \"curl=$?\""),
        false,
    );
    assert!(
        !after["stdout"].as_str().unwrap().contains("served"),
        "{after}"
    );
    assert_eq!(f.snapshot_outside(), before, "something outside changed");
}

/// The attack: with listening and connecting allowed in the loopback network, a command
/// tries everything of the host it might reach: a TCP listener and a UDP socket on the
/// host's 127.0.0.1, a unix socket by its path (a local service such as the docker daemon
/// or the ssh agent), netlink beyond listing the interfaces.
#[test]
fn from_the_loopback_network_nothing_of_the_host_is_reachable() {
    let f = Fixture::new();
    let before = f.snapshot_outside();
    let tcp = TcpListener::bind("127.0.0.1:0").unwrap();
    tcp.set_nonblocking(true).unwrap();
    let tcp_port = tcp.local_addr().unwrap().port();
    let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let udp_port = udp.local_addr().unwrap().port();
    let service = f.root.join("service.sock");
    let unix = UnixListener::bind(&service).unwrap();
    unix.set_nonblocking(true).unwrap();

    let result = f.shell(&format!(
            "bash -c 'echo hello > /dev/tcp/127.0.0.1/{tcp_port}' && echo tcp-connected; \
             bash -c 'echo hello > /dev/udp/127.0.0.1/{udp_port}'; \
             perl -MSocket -e 'socket(my $s, AF_UNIX, SOCK_STREAM, 0) or die \"unix: $!\\n\"; \
             connect($s, pack_sockaddr_un(\"service.sock\")) or die \"connect: $!\\n\"; print \"unix-connected\\n\"'; \
             for protocol in 4 9 15; do perl -MSocket -e \"socket(my \\$s, 16, SOCK_RAW, $protocol) or die qq(netlink $protocol: \\$!\\n); print qq(netlink-open\\n)\"; done; \
             python3 -c 'import socket; print(\"interfaces\", [name for _, name in socket.if_nameindex()])'; \
             cat /proc/net/dev"
        ),
        false,
    );
    let stdout = result["stdout"].as_str().unwrap();
    let stderr = result["stderr"].as_str().unwrap();
    assert!(!stdout.contains("connected"), "{result}");
    assert!(stderr.contains("Connection refused"), "{result}");
    assert!(stderr.contains("unix: Operation not permitted"), "{result}");
    // Netlink only for routing (socket diagnostics, audit and the kernel's device events
    // are refused); it lists only the loopback interface.
    assert!(!stdout.contains("netlink-open"), "{result}");
    for protocol in [4, 9, 15] {
        assert!(
            stderr.contains(&format!("netlink {protocol}: Operation not permitted")),
            "{result}"
        );
    }
    assert!(stdout.contains("interfaces ['lo']"), "{result}");
    // Only the loopback interface is there.
    let interfaces: Vec<&str> = (stdout.lines())
        .filter(|line| !line.starts_with("interfaces"))
        .filter_map(|line| line.split_once(':').map(|(name, _)| name.trim()))
        .filter(|name| !name.contains('|'))
        .collect();
    assert_eq!(interfaces, ["lo"], "{result}");

    assert!(
        tcp.accept().is_err(),
        "the command reached the host's listener"
    );
    // A unix datagram socket by its path, outside the project (journald's, syslog's): a
    // socket pair of the datagram kind could send to it, asked for as `SOCK_DGRAM` or as
    // `SOCK_RAW` (which the kernel makes a datagram one).
    unix_datagrams_stay_home(&f, false);
    let mut buf = [0u8; 16];
    assert!(udp.recv(&mut buf).is_err(), "a datagram reached the host");
    assert!(
        unix.accept().is_err(),
        "the command reached the unix socket"
    );
    assert_eq!(f.snapshot_outside(), before, "something outside changed");
}

/// A command (granted the network or not) sends a datagram to a unix socket outside the
/// project from a socket pair of each datagram kind: refused, and nothing arrives.
pub(crate) fn unix_datagrams_stay_home(f: &Fixture, network: bool) {
    let path = f.outside.join("log.sock");
    let _ = std::fs::remove_file(&path);
    let listener = std::os::unix::net::UnixDatagram::bind(&path).unwrap();
    listener.set_nonblocking(true).unwrap();
    std::fs::write(
        f.root.join("send.py"),
        format!(
            "import socket\n\
             for kind in (socket.SOCK_DGRAM, socket.SOCK_RAW):\n\
             \x20   try:\n\
             \x20       a, b = socket.socketpair(socket.AF_UNIX, kind)\n\
             \x20       a.sendto(b'hi', {path:?})\n\
             \x20       print('sent', int(kind))\n\
             \x20   except OSError as e:\n\
             \x20       print('refused', int(kind), e.strerror)\n",
            path = path.display().to_string()
        ),
    )
    .unwrap();
    let result = f.shell("python3 send.py", network);
    let stdout = result["stdout"].as_str().unwrap();
    assert!(!stdout.contains("sent"), "{result}");
    for kind in [2, 3] {
        assert!(
            stdout.contains(&format!("refused {kind} Operation not permitted")),
            "{result}"
        );
    }
    let mut buf = [0u8; 16];
    assert!(listener.recv(&mut buf).is_err(), "a datagram arrived");
    std::fs::remove_file(f.root.join("send.py")).unwrap();
    std::fs::remove_file(&path).unwrap();
}
