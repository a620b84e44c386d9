//! Ctrl-C while a run's MCP servers are up: `run` and `approve` arm it, and it depends on no other command.

use super::output::errln;

/// Ctrl-C during a run with MCP servers. Each server leads its own process group (so a forced stop reaches
/// the processes it started), which also keeps the terminal's interrupt from reaching it: kill them all,
/// then exit like an interrupted program (130).
pub(super) fn on_interrupt_kill_servers() {
    std::thread::spawn(|| {
        let Ok(rt) = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        else {
            return;
        };
        if rt.block_on(tokio::signal::ctrl_c()).is_ok() {
            crate::mcp::client::kill_all_servers();
            errln!(
                "interrupted: the MCP servers were stopped; the trace ends without an `end` record"
            );
            std::process::exit(130);
        }
    });
}
