//! Tests that hold on every forge.

/// Runs each listed test (a function taking a [`Backend`]) once per forge; after `remote:`, once
/// per forge reached over HTTP (GitHub and GitLab, through their fakes).
#[macro_export]
macro_rules! on_every_forge {
    (remote: $($name:ident),* $(,)?) => {$(
        mod $name {
            use super::*;
            #[test]
            fn github() {
                super::$name(Backend::Github)
            }
            #[test]
            fn gitlab() {
                super::$name(Backend::Gitlab)
            }
        }
    )*};
    ($($name:ident),* $(,)?) => {$(
        mod $name {
            use super::*;
            #[test]
            fn local() {
                super::$name(Backend::Local)
            }
            #[test]
            fn github() {
                super::$name(Backend::Github)
            }
            #[test]
            fn gitlab() {
                super::$name(Backend::Gitlab)
            }
        }
    )*};
}
