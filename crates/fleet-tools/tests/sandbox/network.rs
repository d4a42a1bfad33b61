//! The network switch and Unix sockets.

use super::*;
use std::net::TcpListener;

fn connect(port: u16) -> String {
    format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected")
}

#[tokio::test]
async fn network_off_blocks_a_tcp_connect_to_a_loopback_listener() {
    let p = Project::new();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let off = SandboxConfig {
        enabled: true,
        network: false,
        ..SandboxConfig::default()
    };
    let ctx = p.context(&p.sandbox(SandboxKind::Standard, off, &[]));
    let out = bash(&ctx, &connect(port)).await;
    assert!(out.is_error, "{}", out.content);
    assert!(!out.content.contains("connected"), "{}", out.content);
    let udp = bash(
        &ctx,
        "python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM)' || exit 3",
    )
    .await;
    assert!(udp.is_error, "{}", udp.content);

    let ctx = p.context(&p.configured(&[]));
    let out = bash(&ctx, &connect(port)).await;
    assert!(!out.is_error, "{}", out.content);
    assert!(out.content.contains("connected"));
}

#[tokio::test]
async fn unix_sockets_are_refused_unless_allowed() {
    let p = Project::new();
    let create = "python3 -c 'import socket; socket.socket(socket.AF_UNIX)' && echo made";
    let out = bash(&p.context(&p.configured(&[])), create).await;
    assert!(
        out.is_error && out.content.contains("Operation not permitted"),
        "{}",
        out.content
    );
    let allowed = SandboxConfig {
        enabled: true,
        unix_sockets: true,
        ..SandboxConfig::default()
    };
    let ok = bash(
        &p.context(&p.sandbox(SandboxKind::Standard, allowed, &[])),
        create,
    )
    .await;
    assert!(ok.content.contains("made"), "{}", ok.content);
}
