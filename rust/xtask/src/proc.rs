//! Child processes that never outlive the run.
//!
//! Every Godot is started in its own process group with a parent-death signal, so it dies with
//! `xtask` (even when `xtask` itself is killed) and a timeout kills the whole group.

use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use crate::util::Result;

/// A running child whose group is killed when this value is dropped.
pub struct Guarded {
    child: Child,
    started: Instant,
}

/// How a guarded child ended.
#[derive(Debug)]
pub enum Ending {
    Exited(ExitStatus),
    TimedOut(Duration),
}

impl Guarded {
    /// Starts `cmd` with stdout and stderr both written to `log`.
    pub fn spawn(mut cmd: Command, log: &Path) -> Result<Guarded> {
        let file =
            File::create(log).map_err(|e| format!("cannot create {}: {e}", log.display()))?;
        let err = file
            .try_clone()
            .map_err(|e| format!("cannot duplicate a log handle: {e}"))?;
        cmd.stdin(Stdio::null())
            .stdout(file)
            .stderr(err)
            .process_group(0);
        // SAFETY: only async-signal-safe calls (prctl) between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
        let shown = format!("{cmd:?}");
        let child = cmd
            .spawn()
            .map_err(|e| format!("cannot start {shown}: {e}"))?;
        Ok(Guarded {
            child,
            started: Instant::now(),
        })
    }

    /// Waits until the child exits or `limit` has passed since it started (then kills its group).
    pub fn wait(&mut self, limit: Duration) -> Ending {
        self.wait_watching(limit, || {})
    }

    /// As [`Guarded::wait`], calling `watch` about ten times a second while the child runs (to
    /// report progress from its log).
    pub fn wait_watching(&mut self, limit: Duration, mut watch: impl FnMut()) -> Ending {
        let mut polls = 0u32;
        loop {
            polls = polls.wrapping_add(1);
            if polls.is_multiple_of(5) {
                watch();
            }
            match self.child.try_wait() {
                Ok(Some(status)) => return Ending::Exited(status),
                Ok(None) if self.started.elapsed() >= limit => {
                    self.kill();
                    return Ending::TimedOut(limit);
                }
                Ok(None) => thread::sleep(Duration::from_millis(20)),
                Err(_) => {
                    self.kill();
                    return Ending::TimedOut(self.started.elapsed());
                }
            }
        }
    }

    /// Kills the child's whole process group and reaps the child.
    pub fn kill(&mut self) {
        let pid = self.child.id() as libc::pid_t;
        // SAFETY: signalling a process group we created; failure (already gone) is harmless.
        unsafe {
            libc::killpg(pid, libc::SIGKILL);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Guarded {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            self.kill();
        } else {
            // The leader is gone; make sure nothing it started lingers in its group.
            // SAFETY: as in `kill`.
            unsafe {
                libc::killpg(self.child.id() as libc::pid_t, libc::SIGKILL);
            }
        }
    }
}

/// Returns a TCP/UDP port on 127.0.0.1 that was free a moment ago.
pub fn free_port() -> Result<u16> {
    // ENet is UDP: ask for a UDP port, and make sure TCP (WebSocket) is free on it too.
    for _ in 0..32 {
        let udp = std::net::UdpSocket::bind("127.0.0.1:0")
            .map_err(|e| format!("cannot bind a UDP socket: {e}"))?;
        let port = udp
            .local_addr()
            .map_err(|e| format!("no local address: {e}"))?
            .port();
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return Ok(port);
        }
    }
    Err("no free port on 127.0.0.1".into())
}
