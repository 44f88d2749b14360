//! A remote image in agent output, fetched by the shell when the user clicks "Load image".
//!
//! The window's CSP allows no remote image at all (`img-src` has no `https:`): whatever
//! agent HTML slips past the sanitizer, the WebView fetches nothing from the network.
//! The click is the one way a remote image reaches the page, and it comes through here:
//! https only (redirects too), no cookies, a size and time limit, and only a raster or
//! SVG image type, handed to the page as a `data:` URL (an SVG shown by `<img>` runs no
//! script and loads nothing).

use std::time::Duration;

use base64::Engine;
use reqwest::Url;

/// The largest image loaded (the page gets it base64-encoded, a third larger).
pub const MAX_BYTES: usize = 16 * 1024 * 1024;
const TIMEOUT: Duration = Duration::from_secs(20);
const MAX_REDIRECTS: usize = 5;

/// The media types an image may have; anything else (an HTML error page) is refused.
const IMAGE_TYPES: &[&str] = &[
    "image/png",
    "image/jpeg",
    "image/gif",
    "image/webp",
    "image/avif",
    "image/bmp",
    "image/svg+xml",
    "image/x-icon",
    "image/vnd.microsoft.icon",
];

/// Why an image was not loaded.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ImageError {
    #[error("only https images load (`{0}`)")]
    NotHttps(String),
    #[error("the image could not be fetched: {0}")]
    Request(String),
    #[error("the server answered {0}")]
    Status(u16),
    #[error("not an image (`{0}`)")]
    NotAnImage(String),
    #[error("the image is larger than {} MB", MAX_BYTES / (1024 * 1024))]
    TooLarge,
}

/// The URL the page asked for, if it is one the shell fetches: https, no credentials.
pub fn parse(url: &str) -> Result<Url, ImageError> {
    let parsed = Url::parse(url).map_err(|_| ImageError::NotHttps(url.to_string()))?;
    if parsed.scheme() != "https" || !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(ImageError::NotHttps(url.to_string()));
    }
    Ok(parsed)
}

/// The client the command uses: https only, redirects included.
pub fn client() -> Result<reqwest::Client, ImageError> {
    // reqwest is built without a bundled crypto provider (as in the rest of Weft):
    // install ring once; a provider installed before is kept.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .https_only(true)
        .redirect(reqwest::redirect::Policy::limited(MAX_REDIRECTS))
        .timeout(TIMEOUT)
        .build()
        .map_err(|e| ImageError::Request(e.to_string()))
}

/// Fetches `url` with `client`: the image as a `data:` URL, at most `max_bytes` long
/// before encoding.
pub async fn fetch(
    client: &reqwest::Client,
    url: Url,
    max_bytes: usize,
) -> Result<String, ImageError> {
    let request = |e: reqwest::Error| ImageError::Request(e.without_url().to_string());
    let mut response = client.get(url).send().await.map_err(request)?;
    if !response.status().is_success() {
        return Err(ImageError::Status(response.status().as_u16()));
    }
    let media = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    if !IMAGE_TYPES.contains(&media.as_str()) {
        return Err(ImageError::NotAnImage(media));
    }
    if response
        .content_length()
        .is_some_and(|n| n > max_bytes as u64)
    {
        return Err(ImageError::TooLarge);
    }
    // A server may send more than it announced, or announce nothing: count as it comes.
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(request)? {
        if body.len() + chunk.len() > max_bytes {
            return Err(ImageError::TooLarge);
        }
        body.extend_from_slice(&chunk);
    }
    let encoded = base64::engine::general_purpose::STANDARD.encode(&body);
    Ok(format!("data:{media};base64,{encoded}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// A loopback HTTP server that answers every request with `response`; its URL.
    async fn serve(response: Vec<u8>) -> Url {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let addr = listener.local_addr().unwrap_or_else(|e| panic!("{e}"));
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                let mut request = [0u8; 4096];
                let _ = socket.read(&mut request).await;
                let _ = socket.write_all(&response).await;
                let _ = socket.shutdown().await;
            }
        });
        Url::parse(&format!("http://{addr}/i.png")).unwrap_or_else(|e| panic!("{e}"))
    }

    fn answer(status: &str, content_type: &str, body: &[u8]) -> Vec<u8> {
        let mut r = format!(
            "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
            body.len()
        )
        .into_bytes();
        r.extend_from_slice(body);
        r
    }

    /// The fetch's own checks, over plain HTTP on loopback (the command's client is
    /// https-only; `https_only_client_refuses_http` holds that).
    fn plain() -> reqwest::Client {
        let _ = rustls::crypto::ring::default_provider().install_default();
        reqwest::Client::new()
    }

    #[test]
    fn only_https_urls_without_credentials_are_fetched() {
        assert!(parse("https://example.com/a.png").is_ok());
        for bad in [
            "http://example.com/a.png",
            "data:image/png;base64,AA",
            "file:///etc/passwd",
            "https://user:pw@example.com/a.png",
            "not a url",
        ] {
            assert_eq!(parse(bad), Err(ImageError::NotHttps(bad.into())), "{bad}");
        }
        // As the page's URL parser reads it: a tab inside is dropped.
        assert_eq!(
            parse("h\tttps://example.com/a.png").map(|u| u.to_string()),
            Ok("https://example.com/a.png".to_string())
        );
    }

    #[tokio::test]
    async fn an_image_comes_back_as_a_data_url() {
        let url = serve(answer("200 OK", "image/png; charset=binary", b"\x89PNG")).await;
        assert_eq!(
            fetch(&plain(), url, MAX_BYTES).await,
            Ok("data:image/png;base64,iVBORw==".to_string())
        );
    }

    #[tokio::test]
    async fn what_is_not_an_image_too_large_or_failed_is_refused() {
        let html = serve(answer("200 OK", "text/html", b"<script>x</script>")).await;
        assert_eq!(
            fetch(&plain(), html, MAX_BYTES).await,
            Err(ImageError::NotAnImage("text/html".into()))
        );
        let big = serve(answer("200 OK", "image/gif", &[0u8; 64])).await;
        assert_eq!(fetch(&plain(), big, 63).await, Err(ImageError::TooLarge));
        // More than announced: counted as it arrives.
        let mut lying =
            b"HTTP/1.1 200 OK\r\ncontent-type: image/gif\r\nconnection: close\r\n\r\n".to_vec();
        lying.extend_from_slice(&[0u8; 64]);
        let lying = serve(lying).await;
        assert_eq!(fetch(&plain(), lying, 63).await, Err(ImageError::TooLarge));
        let missing = serve(answer("404 Not Found", "image/png", b"")).await;
        assert_eq!(
            fetch(&plain(), missing, MAX_BYTES).await,
            Err(ImageError::Status(404))
        );
    }

    #[tokio::test]
    async fn https_only_client_refuses_http() {
        let url = serve(answer("200 OK", "image/png", b"x")).await;
        let client = client().unwrap_or_else(|e| panic!("{e}"));
        assert!(matches!(
            fetch(&client, url, MAX_BYTES).await,
            Err(ImageError::Request(_))
        ));
    }
}
