//! go: `go.mod`, read with `gomod-parser` (maintained, winnow-based), and `go.sum`, whose
//! format (`module version[/go.mod] hash`, one per line) is read by hand: no crate parses it
//! and the grammar is three fields.
//!
//! go.mod is both manifest and lock: its `require` lines are the selected versions. Direct
//! requirements (no `// indirect`) are the manifest's dependency entries; indirect ones are
//! transitive packages. Every other directive (`module`, `go`, `toolchain`, `replace`,
//! `exclude`, `retract`, `tool`, `godebug`, `ignore`) is a non-dependency field.

use super::read::{Place, guarded};
use super::{ChangesError, EcosystemSnapshot, LockedPackage, Manifest, Source};
use gomod_parser::{GoMod, Replacement};
use std::collections::{BTreeMap, HashMap};

pub(crate) fn snapshot(place: &Place) -> Result<EcosystemSnapshot, ChangesError> {
    let (dir, _) = place
        .find_up(&["go.mod"])
        .ok_or_else(|| place.missing_lock("go", "go.mod"))?;
    let path = dir.join("go.mod");
    let file = place.rel(&path);
    let text = place.read(&path)?;
    let sum_path = dir.join("go.sum");
    let sum = place.read_optional(&sum_path)?;
    let (manifest, mut packages) = parse_mod(&file, &text)?;
    if let Some(sum) = &sum {
        let hashes = parse_sum(&place.rel(&sum_path), sum)?;
        for package in &mut packages {
            package.integrity = hashes
                .get(&(package.name.as_str(), package.version.as_str()))
                .map(|h| h.to_string());
        }
    } else if !packages.is_empty() {
        return Err(place.missing_lock("go", "go.sum"));
    }
    Ok(EcosystemSnapshot {
        lock_file: sum.is_some().then(|| place.rel(&sum_path)),
        packages,
        format: None,
        manifests: vec![manifest],
    })
}

pub(crate) fn parse_mod(
    file: &str,
    text: &str,
) -> Result<(Manifest, Vec<LockedPackage>), ChangesError> {
    let module: GoMod = guarded(file, || {
        text.parse()
            .map_err(|message: String| ChangesError::parse(file, None, message))
    })?;
    let replaced: HashMap<&str, Source> = module
        .replace
        .iter()
        .map(|r| {
            let target = match &r.replacement {
                Replacement::FilePath(path) => Source::Path(path.clone()),
                Replacement::Module(m) => {
                    Source::Module(format!("{} {}", m.module_path, m.version))
                }
            };
            (r.module_path.as_str(), target)
        })
        .collect();
    let mut manifest = Manifest {
        file: file.to_string(),
        ..Manifest::default()
    };
    let mut packages = Vec::with_capacity(module.require.len());
    for dependency in &module.require {
        let name = dependency.module.module_path.clone();
        let version = dependency.module.version.clone();
        if !dependency.indirect {
            manifest
                .dependencies
                .entry("require".to_string())
                .or_default()
                .insert(name.clone(), version.clone());
        }
        packages.push(LockedPackage {
            source: replaced
                .get(name.as_str())
                .cloned()
                .unwrap_or_else(|| Source::Module(name.clone())),
            integrity: None,
            direct: !dependency.indirect,
            name,
            version,
        });
    }
    manifest.fields = fields(&module);
    Ok((manifest, packages))
}

/// The non-dependency directives, each as one comparable value.
fn fields(module: &GoMod) -> BTreeMap<String, String> {
    let mut fields = BTreeMap::new();
    let mut put = |key: &str, value: String| {
        if !value.is_empty() {
            fields.insert(key.to_string(), value);
        }
    };
    put("module", module.module.clone());
    put("go", module.go.clone().unwrap_or_default());
    put("toolchain", module.toolchain.clone().unwrap_or_default());
    let mut godebug: Vec<_> = module
        .godebug
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    godebug.sort();
    put("godebug", godebug.join(", "));
    put("tool", module.tool.join(", "));
    put("ignore", module.ignore.join(", "));
    let listed = |items: Vec<String>| {
        let mut items = items;
        items.sort();
        items.join("; ")
    };
    put(
        "exclude",
        listed(
            module
                .exclude
                .iter()
                .map(|e| format!("{} {}", e.module.module_path, e.module.version))
                .collect(),
        ),
    );
    put(
        "replace",
        listed(module.replace.iter().map(replacement).collect()),
    );
    put(
        "retract",
        listed(module.retract.iter().map(|r| format!("{r:?}")).collect()),
    );
    fields
}

/// `old [version] => new [version]`, without the parser's byte spans (which move with any edit).
fn replacement(r: &gomod_parser::ModuleReplacement) -> String {
    let target = match &r.replacement {
        Replacement::FilePath(path) => path.clone(),
        Replacement::Module(m) => format!("{} {}", m.module_path, m.version),
    };
    format!(
        "{} {} => {target}",
        r.module_path,
        r.version.as_deref().unwrap_or("")
    )
    .replace("  ", " ")
}

/// `h1:` hashes of module zips by (module, version); the `/go.mod` lines hash only the
/// module's go.mod and are not the package's content.
pub(crate) fn parse_sum<'a>(
    file: &str,
    text: &'a str,
) -> Result<HashMap<(&'a str, &'a str), &'a str>, ChangesError> {
    let mut hashes = HashMap::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let mut words = line.split_whitespace();
        let (Some(module), Some(version), Some(hash), None) =
            (words.next(), words.next(), words.next(), words.next())
        else {
            return Err(ChangesError::parse(
                file,
                Some(i + 1),
                "expected `module version hash`",
            ));
        };
        if !version.ends_with("/go.mod") {
            hashes.insert((module, version), hash);
        }
    }
    Ok(hashes)
}
