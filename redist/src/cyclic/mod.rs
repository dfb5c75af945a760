//! General redistribution between two block-cyclic distributions of one array (the ScaLAPACK
//! `p?gemr2d` problem, after Dongarra, Prylli, Randriamaro and Tourancheau): [`plan`] computes
//! who sends what to whom, with no MPI; [`copy`] maps each message onto the local arrays;
//! [`run`] moves the messages over MPI with a choice of schedules.

pub mod copy;
mod kernel;
pub mod plan;
pub mod run;
