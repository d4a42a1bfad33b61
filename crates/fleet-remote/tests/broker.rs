//! The broker's pieces are made by whoever connects first and found by everyone after.

use fleet_remote::{names, Broker};
use fleet_testkit::NatsServer;

#[tokio::test]
async fn the_first_connection_makes_the_pieces_and_later_ones_find_them() {
    let Some(server) = NatsServer::start() else {
        return;
    };
    let first = Broker::connect(&server.url()).await.expect("first");
    let second = Broker::connect(&server.url()).await.expect("second");
    for name in [
        names::JOBS_STREAM,
        names::EVENTS_STREAM,
        names::CONTROL_STREAM,
    ] {
        second.js.get_stream(name).await.expect(name);
    }
    first.tasks.put("x", "1".into()).await.expect("put");
    let seen = second.tasks.get("x").await.expect("get");
    assert_eq!(seen.as_deref(), Some(&b"1"[..]));
}

#[tokio::test]
async fn a_url_with_nothing_behind_it_fails_at_once_naming_it() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("port")
        .port();
    let url = format!("nats://127.0.0.1:{port}");
    let err = Broker::connect(&url).await.expect_err("nothing listens");
    assert!(err.to_string().contains(&url), "{err}");
}
