//! The seccomp filter's architecture checks, the commands' terminal and their cgroups.

use serde_json::json;

use crate::common::Fixture;

fn shell(f: &Fixture, command: &str) -> serde_json::Value {
    f.call(
        "run_shell",
        json!({"command": command, "timeout_seconds": 20}),
    )
    .unwrap()
}

/// A system call made through the x32 ABI (number with bit 30 set) is refused by the filter
/// (`EPERM`) instead of reaching a kernel that may implement it (`ENOSYS` here otherwise).
#[test]
fn seccomp_refuses_x32_system_calls() {
    if !cfg!(target_arch = "x86_64") || !std::path::Path::new("/usr/bin/python3").exists() {
        println!("skipped: needs x86_64 and /usr/bin/python3");
        return;
    }
    let f = Fixture::new();
    let result = shell(
        &f,
        "/usr/bin/python3 -c 'import ctypes; l = ctypes.CDLL(None, use_errno=True); \
         r = l.syscall(0x40000027); print(\"x32\", r, ctypes.get_errno())'",
    );
    let stdout = result["stdout"].as_str().unwrap();
    assert!(stdout.contains("x32 -1 1\n"), "{result}");
}

/// A static x86_64 ELF executable of one page loaded at `0x400000` whose code is `code`.
fn tiny_elf(code: &[u8]) -> Vec<u8> {
    const BASE: u64 = 0x40_0000;
    const HEADERS: u64 = 64 + 56;
    let size = HEADERS + code.len() as u64;
    let mut elf = Vec::new();
    // ELF header: 64-bit, little-endian, version 1, an executable for x86-64.
    elf.extend_from_slice(&[0x7f, b'E', b'L', b'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    elf.extend_from_slice(&2u16.to_le_bytes()); // ET_EXEC
    elf.extend_from_slice(&62u16.to_le_bytes()); // EM_X86_64
    elf.extend_from_slice(&1u32.to_le_bytes());
    elf.extend_from_slice(&(BASE + HEADERS).to_le_bytes()); // entry: the code
    elf.extend_from_slice(&64u64.to_le_bytes()); // program headers right after
    elf.extend_from_slice(&0u64.to_le_bytes()); // no section headers
    elf.extend_from_slice(&0u32.to_le_bytes());
    for half in [64u16, 56, 1, 0, 0, 0] {
        elf.extend_from_slice(&half.to_le_bytes());
    }
    // One PT_LOAD, readable and executable, of the whole file.
    elf.extend_from_slice(&1u32.to_le_bytes());
    elf.extend_from_slice(&5u32.to_le_bytes());
    for word in [0, BASE, BASE, size, size, 0x1000] {
        elf.extend_from_slice(&word.to_le_bytes());
    }
    elf.extend_from_slice(code);
    elf
}

/// `getpid` through `int 0x80`, the i386 ABI of a 64-bit kernel (a foreign architecture to
/// the filter: `AUDIT_ARCH_I386`), then `exit(42)` through the native ABI: a program that
/// outlives the foreign call exits 42.
const I386_GETPID_THEN_EXIT_42: [u8; 19] = [
    0xb8, 20, 0, 0, 0, // mov eax, 20 (getpid on i386)
    0xcd, 0x80, // int 0x80
    0xb8, 60, 0, 0, 0, // mov eax, 60 (exit on x86_64)
    0xbf, 42, 0, 0, 0, // mov edi, 42
    0x0f, 0x05, // syscall
];

/// A system call of another architecture (i386's `int 0x80` from a 64-bit program) kills the
/// process that makes it: the filter checks the architecture before anything else, so the
/// i386 numbers (which differ from x86_64's) cannot slip a denied call past it.
#[test]
fn seccomp_kills_a_process_calling_with_a_foreign_architecture() {
    use std::os::unix::fs::PermissionsExt;
    if !cfg!(target_arch = "x86_64") {
        println!("skipped: the foreign-architecture program is for x86_64");
        return;
    }
    let f = Fixture::new();
    let program = f.root.join("i386-call");
    std::fs::write(&program, tiny_elf(&I386_GETPID_THEN_EXIT_42)).unwrap();
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
    // Outside the sandbox the call works (the program exits 42) where the kernel has the
    // i386 ABI; without it, `int 0x80` faults and there is nothing to test.
    // Another test thread may fork while the file is still open for writing here; the
    // child holds the descriptor until its exec, and running the file then fails with
    // ETXTBSY for a moment.
    let native = (0..50)
        .find_map(|_| match std::process::Command::new(&program).status() {
            Err(error) if error.raw_os_error() == Some(26) => {
                std::thread::sleep(std::time::Duration::from_millis(20));
                None
            }
            other => Some(other),
        })
        .unwrap()
        .unwrap();
    if native.code() != Some(42) {
        println!(
            "skipped: this kernel does not run i386 system calls ({native:?}: no IA32 \
             emulation), so no foreign call can reach the filter"
        );
        return;
    }
    let result = shell(&f, "./i386-call; echo \"status=$?\"");
    let stdout = result["stdout"].as_str().unwrap();
    // 159 = 128 + SIGSYS: killed by the filter, not run.
    assert!(stdout.contains("status=159"), "{result}");
}

/// A command has no controlling terminal: `/dev/tty` cannot be opened, so escape sequences
/// and `stty` cannot reach the user's terminal.
#[test]
fn shell_commands_have_no_controlling_terminal() {
    let f = Fixture::new();
    let result = shell(&f, "printf x > /dev/tty; echo \"tty=$?\"");
    let stdout = result["stdout"].as_str().unwrap();
    assert!(
        stdout.contains("tty=1") || stdout.contains("tty=2"),
        "{result}"
    );
    assert!(
        result["stderr"]
            .as_str()
            .unwrap()
            .contains("No such device or address"),
        "{result}"
    );
}

/// As root, a command's memory limit holds for all its processes together: it runs in a
/// memory cgroup of its own.
#[test]
fn as_root_a_command_gets_a_memory_cgroup() {
    if !rustix::process::geteuid().is_root() {
        println!("skipped: only root can make cgroups here");
        return;
    }
    if !std::path::Path::new("/sys/fs/cgroup").is_dir() {
        println!("skipped: no cgroup file system");
        return;
    }
    let f = Fixture::new();
    let result = shell(&f, "cat /proc/self/cgroup");
    let stdout = result["stdout"].as_str().unwrap();
    let memory = stdout
        .lines()
        .find(|line| line.contains(":memory:") || line.starts_with("0::"))
        .unwrap_or("");
    assert!(memory.contains("/ybs-"), "{result}");
}
