//! The attacks of a hostile registry and a hostile dependency on a run, each through the binary
//! with a positive control: the same attack where the defence is off (isolation `none`, a limit
//! lifted, a host allowed) gets through, or the attack is shown to have run, so that no test can
//! pass because its attack silently did not happen.

mod hostile_locks;
mod limits;
mod shared_host;
mod sinks;
mod sources;
