//! Recording and replay: the squad's record ring read back per frame, seeking and leaving replay,
//! and the CSV export streamed to a Godot file.

use godot::classes::FileAccess;
use godot::prelude::*;

use super::{place_on_ground, FormationController};
use crate::convert::from_ground;
use crate::direct::Alive;

#[godot_api(secondary)]
impl FormationController {
    /// Returns how many frames the recording holds.
    #[func]
    pub fn get_recorded_frames(&self) -> i32 {
        self.squad.recorder().map_or(0, |r| r.len() as i32)
    }

    /// Pauses the squad and shows recorded frame `frame` (0 = oldest). Returns false when there is
    /// no such frame.
    #[func]
    pub fn replay_seek(&mut self, frame: i32) -> bool {
        let ok = frame >= 0
            && self
                .squad
                .recorder()
                .is_some_and(|r| (frame as usize) < r.len());
        if ok {
            self.replay_frame = Some(frame as usize);
            self.draw_agents();
        }
        ok
    }

    /// Leaves replay: the squad continues from its live state.
    #[func]
    pub fn replay_stop(&mut self) {
        self.replay_frame = None;
        self.write_agents();
    }

    /// Returns true while showing a recorded frame.
    #[func]
    pub fn is_replaying(&self) -> bool {
        self.replay_frame.is_some()
    }

    /// Returns recorded agent `index`'s sample in frame `frame`: `position` (global), `heading`
    /// (rad, global), `speed` (m/s), `state`; empty when out of range.
    #[func]
    pub fn get_recorded_sample(&self, frame: i32, index: i32) -> VarDictionary {
        let mut d = VarDictionary::new();
        let Some((_, samples)) = self
            .squad
            .recorder()
            .and_then(|r| r.frame(frame.max(0) as usize))
        else {
            return d;
        };
        if let Some(s) = samples.get(index.max(0) as usize) {
            d.set("position", self.base().to_global(from_ground(s.pos, 0.0)));
            d.set("heading", s.heading + self.base().get_global_rotation().y);
            d.set("speed", s.speed);
            d.set("state", s.state as i32);
        }
        d
    }

    /// Writes the recording as CSV (`tick,agent,x,z,heading,speed,state`, local frame) to `path`.
    /// Returns false when nothing is recorded or the file cannot be written.
    #[func]
    pub fn export_recording(&self, path: GString) -> bool {
        let Some(rec) = self.squad.recorder() else {
            self.warn_plain("export_recording: nothing is recorded (set recording = true first)");
            return false;
        };
        let Some(file) = FileAccess::open(&path, godot::classes::file_access::ModeFlags::WRITE)
        else {
            self.warn_plain(&format!(
                "export_recording: cannot open '{path}' for writing ({:?})",
                FileAccess::get_open_error()
            ));
            return false;
        };
        // Streamed through a 64 KiB buffer: the CSV is never built in memory.
        let mut out = std::io::BufWriter::with_capacity(64 << 10, FileSink(file));
        let written = rec.export_csv(&mut out).and_then(|()| {
            use std::io::Write as _;
            out.flush()
        });
        if let Err(e) = written {
            self.warn_plain(&format!("export_recording: writing '{path}' failed ({e})"));
            return false;
        }
        true
    }
}

impl FormationController {
    /// Starts the squad's recording ring, warning when the byte budget cuts the frames asked for.
    pub(super) fn start_recording(&mut self) {
        let asked = self.record_frame_count();
        let kept = self.squad.set_recording(asked);
        if kept < asked {
            self.warn_plain(&format!(
                "record_frames: {asked} frames of {} agents exceed the recording budget of {} MiB; \
                 keeping the last {kept}",
                self.squad.len(),
                entwine_core::formation::MAX_RECORD_BYTES >> 20
            ));
        }
    }

    pub(super) fn write_replay_children(&mut self) {
        let Some(frame) = self.replay_frame else {
            return;
        };
        let Some((_, samples)) = self.squad.recorder().and_then(|r| r.frame(frame)) else {
            return;
        };
        let samples: Vec<_> = samples.to_vec();
        for (i, s) in samples.iter().enumerate().take(self.agents.len()) {
            if !self.agents[i].alive() {
                continue;
            }
            place_on_ground(&mut self.agents[i].clone(), s.pos, s.heading);
        }
    }
}

/// A `std::io::Write` over a Godot file (each write is one `store_buffer`).
pub(super) struct FileSink(Gd<FileAccess>);

impl std::io::Write for FileSink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.0.store_buffer(&PackedByteArray::from(buf)) {
            Ok(buf.len())
        } else {
            Err(std::io::Error::other(format!("{:?}", self.0.get_error())))
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush();
        Ok(())
    }
}
