//! The network of an allow-list: an HTTP `CONNECT` proxy the runtime runs outside the sandbox
//! on a Unix socket, the only way out of the sandbox's empty network namespace. It opens a
//! tunnel to a `host:port` of the allow-list and answers `403` to anything else.

use std::collections::BTreeSet;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpStream, UnixListener, UnixStream};
use tokio::task::JoinHandle;

/// The environment variable that gives the program the proxy's socket.
pub(super) const SOCKET_VAR: &str = "TOOL_CORE_PROXY_SOCKET";

/// The longest request head read.
const MAX_HEAD: usize = 8 * 1024;

/// A running proxy: stopped, and its socket removed, when dropped.
pub(super) struct Proxy {
    dir: PathBuf,
    socket: PathBuf,
    task: JoinHandle<()>,
}

impl Proxy {
    /// Starts a proxy to `allowed` (`host:port` pairs) on a socket of its own.
    pub(super) fn start(allowed: &BTreeSet<String>) -> std::io::Result<Proxy> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let dir = std::env::temp_dir().join(format!(
            "tool-core-proxy-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir(&dir)?;
        // Others (a sandbox running as another user) may reach the socket, not list the folder.
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o711))?;
        let socket = dir.join("proxy.sock");
        let listener = UnixListener::bind(&socket)?;
        std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o777))?;
        let allowed = Arc::new(allowed.clone());
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(serve(stream, Arc::clone(&allowed)));
            }
        });
        Ok(Proxy { dir, socket, task })
    }

    /// The socket's path.
    pub(super) fn socket(&self) -> &Path {
        &self.socket
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// One client: a `CONNECT host:port` request, then the tunnel or a refusal.
async fn serve(mut client: UnixStream, allowed: Arc<BTreeSet<String>>) {
    let mut head = Vec::new();
    let mut buf = [0; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        match client.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
        if head.len() > MAX_HEAD {
            let _ = client
                .write_all(b"HTTP/1.1 431 Request Header Fields Too Large\r\n\r\n")
                .await;
            return;
        }
    }
    let end = head
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map_or(head.len(), |at| at + 4);
    let line = String::from_utf8_lossy(&head[..end]);
    let mut words = line.lines().next().unwrap_or("").split(' ');
    let target = match (words.next(), words.next()) {
        (Some("CONNECT"), Some(target)) => target.to_owned(),
        _ => {
            let _ = client
                .write_all(b"HTTP/1.1 405 Method Not Allowed\r\n\r\n")
                .await;
            return;
        }
    };
    if !allowed.contains(&target) {
        let _ = client
            .write_all(b"HTTP/1.1 403 Forbidden\r\n\r\nnot on the tool's network allow-list\n")
            .await;
        return;
    }
    let Ok(mut upstream) = TcpStream::connect(&target).await else {
        let _ = client.write_all(b"HTTP/1.1 502 Bad Gateway\r\n\r\n").await;
        return;
    };
    if client
        .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
        .await
        .is_err()
    {
        return;
    }
    // Bytes the client sent after the head go first.
    if end < head.len() && upstream.write_all(&head[end..]).await.is_err() {
        return;
    }
    let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
}
