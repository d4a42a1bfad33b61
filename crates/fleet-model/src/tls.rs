//! TLS for every HTTP client fleet builds: ring and the bundled Mozilla roots.
//!
//! reqwest is built without a crypto provider (so the build holds one crypto library, ring, and
//! no aws-lc); a client built without a configuration from here would panic at its first
//! use. The bundled roots give the same trust on every machine, whatever certificate store it
//! has or lacks.

use std::sync::Arc;

/// A rustls client configuration for reqwest's `tls_backend_preconfigured`.
pub fn client_config() -> Result<rustls::ClientConfig, rustls::Error> {
    let roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    let mut config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()?
    .with_root_certificates(roots)
    .with_no_client_auth();
    // HTTP/2 where the server offers it, as reqwest's own configuration does.
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(config)
}

/// A reqwest client builder with [`client_config`] in place.
pub fn client_builder() -> Result<reqwest::ClientBuilder, rustls::Error> {
    Ok(reqwest::Client::builder().tls_backend_preconfigured(client_config()?))
}
