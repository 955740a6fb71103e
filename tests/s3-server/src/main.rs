//! `assets-s3-server ROOT [--port N] [--stall]`: serves the directory ROOT
//! over the S3 protocol (s3s-fs: each top-level folder is a bucket), on
//! 127.0.0.1, with the access key `assets-test` / `assets-test-secret`.
//!
//! It prints `listening on 127.0.0.1:PORT` once it accepts connections, so
//! a test that asked for port 0 learns the port it got. `--stall` accepts
//! connections and never answers: a server that hangs, for the timeouts.
//! `--stall-writes` answers reads and never answers a write (`PUT`): a
//! server that freezes once a build starts uploading.
//!
//! Every connection gets `TCP_NODELAY`, as production S3 endpoints do;
//! without it a response's body waits for the client's delayed ACK (~40 ms
//! per read on a kept-alive connection).

use std::io::Write;
use std::path::PathBuf;

use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder;
use s3s::auth::SimpleAuth;
use s3s::service::{S3Service, S3ServiceBuilder};
use tokio::net::TcpListener;

/// The access key the server accepts.
const ACCESS_KEY: &str = "assets-test";
/// Its secret.
const SECRET_KEY: &str = "assets-test-secret";

fn main() {
    let mut root = None;
    let mut port = 0u16;
    let mut stall = false;
    let mut stall_writes = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--port" => {
                port = args
                    .next()
                    .and_then(|p| p.parse().ok())
                    .unwrap_or_else(|| usage("--port takes a number"));
            }
            "--stall" => stall = true,
            "--stall-writes" => stall_writes = true,
            _ if root.is_none() => root = Some(PathBuf::from(arg)),
            _ => usage(&format!("unexpected argument `{arg}`")),
        }
    }
    let root = root.unwrap_or_else(|| usage("the directory to serve is missing"));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    runtime.block_on(serve(root, port, stall, stall_writes));
}

fn usage(problem: &str) -> ! {
    eprintln!(
        "error: {problem}\nusage: assets-s3-server ROOT [--port N] [--stall | --stall-writes]"
    );
    std::process::exit(2)
}

async fn serve(root: PathBuf, port: u16, stall: bool, stall_writes: bool) {
    let fs = s3s_fs::FileSystem::new(&root)
        .unwrap_or_else(|e| usage(&format!("cannot serve `{}`: {e:?}", root.display())));
    let mut service = S3ServiceBuilder::new(fs);
    service.set_auth(SimpleAuth::from_single(ACCESS_KEY, SECRET_KEY));
    let service = service.build();
    let listener = TcpListener::bind(("127.0.0.1", port))
        .await
        .unwrap_or_else(|e| usage(&format!("cannot listen on port {port}: {e}")));
    let address = listener.local_addr().expect("a bound address");
    println!("listening on {address}");
    let _ = std::io::stdout().flush();
    let http = Builder::new(TokioExecutor::new());
    let mut stalled = Vec::new();
    loop {
        let Ok((socket, _)) = listener.accept().await else {
            continue;
        };
        if stall {
            stalled.push(socket);
            continue;
        }
        let _ = socket.set_nodelay(true);
        let service = StallWrites {
            inner: service.clone(),
            stall: stall_writes,
        };
        let connection = http
            .serve_connection(TokioIo::new(socket), service)
            .into_owned();
        tokio::spawn(async move {
            let _ = connection.await;
        });
    }
}

/// The S3 service, with writes never answered when `stall` is set.
#[derive(Clone)]
struct StallWrites {
    inner: S3Service,
    stall: bool,
}

impl hyper::service::Service<hyper::Request<hyper::body::Incoming>> for StallWrites {
    type Response = s3s::HttpResponse;
    type Error = s3s::HttpError;
    type Future = std::pin::Pin<
        Box<dyn std::future::Future<Output = Result<Self::Response, Self::Error>> + Send>,
    >;

    fn call(&self, request: hyper::Request<hyper::body::Incoming>) -> Self::Future {
        if self.stall && request.method() == hyper::Method::PUT {
            return Box::pin(std::future::pending());
        }
        hyper::service::Service::call(&self.inner, request)
    }
}
