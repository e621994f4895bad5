//! Entwine's Godot glue: each node holds core state plus its `base`, converts, and delegates.
//!
//! Nothing here decides behaviour; the decisions live in `entwine-core`.

use godot::prelude::*;

mod bones;
mod convert;
mod debug_draw;
mod direct;
mod editor;
mod env_touch;
mod formation;
mod hold_hand;
mod inbox;
mod inspector;
mod limb_ik;
mod monitors;
mod names;
mod net_clock;
mod rig;
mod rope;
mod scene;
mod time;
mod warnings;

pub use editor::{EntwineEditorPlugin, EntwineGizmos, FormationEditor};
pub use env_touch::EnvironmentInteractionStateMachine;
pub use formation::{
    AgentSource, FormationController, FormationFacing, FormationKind, FormationShape,
    SoldierBearing,
};
pub use hold_hand::{HoldHandComponent, HoldHandRoom};
pub use limb_ik::LimbIK;
pub use net_clock::NetClock;
pub use rig::HumanoidRig;
pub use rope::{RopeBoneChain, RopeChainFit, RopePreset, RopeSimulation};

struct Entwine;

#[gdextension]
unsafe impl ExtensionLibrary for Entwine {
    fn on_stage_init(stage: InitStage) {
        if stage == InitStage::Scene {
            direct::load();
            inbox::register_settings();
        }
        if stage == InitStage::MainLoop {
            monitors::register();
        }
    }

    fn on_stage_deinit(stage: InitStage) {
        // The rope batches' helper threads end here, before the library can be unloaded (the
        // editor reloads it after a rebuild), and the kept StringNames are given back.
        if stage == InitStage::MainLoop {
            monitors::unregister();
            rope::release_server();
            names::release();
            inbox::release();
        }
    }
}
