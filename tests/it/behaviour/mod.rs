//! The engine's behavioural suite: `quartermaster run` end to end with real git repositories, real
//! `cargo update` against a local registry and real `cargo test`, run once per forge: the local
//! forge, and GitHub and GitLab through HTTP fakes of their APIs with branches pushed over smart
//! HTTP behind the token. The same assertions hold on every forge. Hermetic: no network.

mod ownership;
mod safety;
mod strategies;
