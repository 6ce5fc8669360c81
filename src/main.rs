//! The `quartermaster` binary: everything lives in the library; see `quartermaster::cli`.

fn main() -> std::process::ExitCode {
    // The sandbox re-executes this binary as its helper; that must happen before anything else.
    quartermaster::sandbox::enter_if_requested();
    // Before any thread starts: the workspaces' mounts stay in this process's own namespace.
    quartermaster::sandbox::enter_private_mounts();
    quartermaster::cli::main()
}
