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

/// A loopback sparse index whose `config.json` names `api` as the registry's web API, and which
/// answers `/api/v1/crates/x` with a repository.
fn sparse_index(api: Option<&str>) -> String {
    let server = tiny_http::Server::http("127.0.0.1:0").unwrap();
    let root = format!("http://{}", server.server_addr().to_ip().unwrap());
    let api = api.map_or_else(|| root.clone(), String::from);
    std::thread::spawn(move || {
        for request in server.incoming_requests() {
            let body = match request.url() {
                "/index/config.json" => format!(r#"{{"dl":"{api}/dl","api":"{api}"}}"#),
                "/api/v1/crates/x" => r#"{"crate":{"repository":"https://github.com/o/x"}}"#.into(),
                _ => String::new(),
            };
            let _ = request.respond(tiny_http::Response::from_string(body));
        }
    });
    format!("{root}/index/")
}

#[tokio::test]
async fn a_crate_page_that_cannot_be_read_is_said_so_not_taken_for_no_repository() {
    let http = Http::new().unwrap();
    let facts = Facts::default();
    let links = |index: String| {
        let (http, facts) = (http.clone(), facts.clone());
        async move {
            let endpoint = Endpoint::CratesSparse { index };
            links(&http, &Cache::default(), &endpoint, "x", &facts).await
        }
    };
    assert_eq!(
        links(sparse_index(None)).await.unwrap(),
        (Some("https://github.com/o/x".to_string()), None)
    );
    let unreachable = links(sparse_index(Some("http://127.0.0.1:9"))).await;
    let why = unreachable
        .expect_err("an API that cannot be reached names no repository")
        .to_string();
    assert!(
        why.starts_with("the page of x on the registry's web API: "),
        "{why}"
    );
}
