//! General redistribution between two block-cyclic distributions of one array (the ScaLAPACK
//! `p?gemr2d` problem, after Dongarra, Prylli, Randriamaro and Tourancheau): [`plan`] computes
//! who sends what to whom, with no MPI; [`copy`] maps each message onto the local arrays;
//! [`run`] moves the messages over MPI with a choice of schedules; [`thakur`] holds Thakur,
//! Choudhary and Ramanujam's methods for one cyclic(x) to cyclic(y) axis.

pub mod copy;
mod kernel;
pub mod plan;
pub mod run;
pub mod thakur;

/// The greatest common divisor (`gcd(a, 0) = a`): block-cyclic patterns repeat after the
/// least common multiple of their periods.
pub(crate) fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}
