//! Tests that hold on every forge.

/// Runs each listed test (a function taking a [`Backend`]) once per forge; after `remote:`, once
/// per forge reached over HTTP (GitHub and GitLab, through their fakes).
#[macro_export]
macro_rules! on_every_forge {
    (@module $name:ident: $($test:ident $backend:ident),*) => {
        mod $name {
            use super::*;
            $(
                #[test]
                fn $test() {
                    super::$name(Backend::$backend)
                }
            )*
        }
    };
    (remote: $($name:ident),* $(,)?) => {$(
        $crate::on_every_forge!(@module $name: github Github, gitlab Gitlab);
    )*};
    ($($name:ident),* $(,)?) => {$(
        $crate::on_every_forge!(@module $name: local Local, github Github, gitlab Gitlab);
    )*};
}
