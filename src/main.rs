//! The `quartermaster` binary: everything lives in the library; see `quartermaster::cli`.

fn main() -> std::process::ExitCode {
    // The sandbox re-executes this binary as its helper; that must happen before anything else.
    quartermaster::sandbox::enter_if_requested();
    quartermaster::cli::main()
}
