use super::*;

#[test]
fn registry_times_parse() {
    let t = |s: &str| parse_time(s).map(|t| humantime::format_rfc3339_seconds(t).to_string());
    assert_eq!(
        t("2024-01-02T03:04:05.678Z").as_deref(),
        Some("2024-01-02T03:04:05Z")
    );
    assert_eq!(
        t("2024-01-02T03:04:05+00:00").as_deref(),
        Some("2024-01-02T03:04:05Z")
    );
    assert_eq!(
        t("2024-01-02T03:04:05.123456Z").as_deref(),
        Some("2024-01-02T03:04:05Z")
    );
    assert_eq!(
        t("2024-01-02T03:04:05").as_deref(),
        Some("2024-01-02T03:04:05Z")
    );
    assert_eq!(t("yesterday"), None);
}

#[test]
fn repository_urls_are_tidied() {
    for (raw, url) in [
        (
            "git+https://github.com/o/r.git",
            Some("https://github.com/o/r"),
        ),
        ("github:o/r", Some("https://github.com/o/r")),
        ("o/r", Some("https://github.com/o/r")),
        ("git@gitlab.com:g/p.git", Some("https://gitlab.com/g/p")),
        (
            "git://github.com/o/r.git#main",
            Some("https://github.com/o/r"),
        ),
        ("https://example.com/x/", Some("https://example.com/x")),
        ("not a url", None),
    ] {
        assert_eq!(repository_url(raw).as_deref(), url, "{raw}");
    }
}
