//! The simulation time a robot's state is stamped with.

/// A simulation-time stamp (Gazebo's `gz.msgs.Time`, a ROS header's stamp): seconds and
/// nanoseconds, kept apart as the messages carry them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SimTime {
    /// Whole seconds.
    pub sec: i64,
    /// Nanoseconds added to `sec`.
    pub nsec: i32,
}

impl SimTime {
    /// The stamp as nanoseconds.
    pub fn as_nanos(&self) -> i128 {
        i128::from(self.sec) * 1_000_000_000 + i128::from(self.nsec)
    }

    /// The stamp as seconds.
    pub fn as_secs_f64(&self) -> f64 {
        self.sec as f64 + f64::from(self.nsec) * 1e-9
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_negative_second_with_nanoseconds_counts_them_forward() {
        let stamp = SimTime {
            sec: -2,
            nsec: 250_000_000,
        };
        assert_eq!(stamp.as_nanos(), -1_750_000_000);
        assert_eq!(stamp.as_secs_f64(), -1.75);
    }
}
