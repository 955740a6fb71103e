//! The test server speaks S3 as OpenDAL's client expects: objects written
//! are read back, listed, and missing ones are "not found"; a killed
//! server is an error, not a hang.

use assets_test_support::s3_server::S3Server;
use opendal::{ErrorKind, Operator};

/// A client of `server` under `root`, signing with `secret`.
fn operator(server: &S3Server, root: &str, secret: &str) -> Operator {
    opendal::install_default();
    let _ = rustls::crypto::ring::default_provider().install_default();
    opendal::HttpTransporter::install_default(
        opendal_http_transport_reqwest::ReqwestTransport::default(),
    );
    Operator::via_iter(
        "s3",
        [
            ("bucket", assets_test_support::s3_server::BUCKET),
            ("root", root),
            ("endpoint", &format!("http://127.0.0.1:{}", server.port())),
            ("region", "us-east-1"),
            ("access_key_id", "assets-test"),
            ("secret_access_key", secret),
            ("disable_config_load", "true"),
        ]
        .map(|(k, v)| (k.to_owned(), v.to_owned())),
    )
    .unwrap()
}

#[test]
fn objects_written_are_read_back_and_listed() {
    let mut server = S3Server::start();
    let op = operator(&server, "/team", "assets-test-secret");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        op.write("ac/one", b"first".to_vec()).await.unwrap();
        op.write("cas/two", vec![7u8; 300_000]).await.unwrap();
        assert_eq!(op.read("ac/one").await.unwrap().to_vec(), b"first");
        assert_eq!(op.read("cas/two").await.unwrap().len(), 300_000);
        assert_eq!(op.stat("cas/two").await.unwrap().content_length(), 300_000);
        let missing = op.read("ac/none").await.unwrap_err();
        assert_eq!(missing.kind(), ErrorKind::NotFound);
    });
    assert_eq!(server.objects("team"), ["ac/one", "cas/two"]);
    // Wrong keys are refused.
    let other = operator(&server, "/", "wrong");
    let refused = runtime.block_on(other.read("team/ac/one")).unwrap_err();
    assert_ne!(refused.kind(), ErrorKind::NotFound, "{refused}");
    server.kill();
    let down = runtime.block_on(op.read("ac/one")).unwrap_err();
    assert_ne!(down.kind(), ErrorKind::NotFound, "{down}");
}
