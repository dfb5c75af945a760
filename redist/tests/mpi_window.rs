//! Shared-memory group windows (`redist::transport::window::GroupWindow`) of both kinds: small regions
//! (an MPI window) and large ones (a POSIX shared-memory mapping on 2 MiB boundaries, pages
//! collapsed into huge ones where the system allows). On every rank count: `None` on one
//! rank; otherwise regions of the size asked for, contiguous from a cache-line boundary,
//! zeroed, each member's writes seen by every member after a sync (with several windows in
//! one `sync_all` too), and a window's memory independent of the others'.
use mpi::collective::CommunicatorCollectives;
use redist::transport::window::GroupWindow;

const BODY: &str = "window_body";

mpi_harness::launches!(BODY, 60;
    window_np1 => 1, window_np2 => 2, window_np3 => 3, window_np4 => 4);

/// The value member `q` writes at word `i` of its region in round `round`.
fn value(q: usize, i: usize, round: u64) -> u64 {
    ((q as u64) << 40) ^ ((i as u64) << 3) ^ round.wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

#[test]
#[ignore = "MPI body: run by the window_np* launchers under mpirun"]
fn window_body() {
    let Some(mpi) = mpi_harness::start(BODY) else {
        return;
    };
    let world = mpi.world();
    let (rank, size) = (mpi.rank(), mpi.size());
    // Uneven requests: every member gets the largest, in whole cache lines. Below and above
    // the size from which windows lie on huge pages, and one a little over 2 MiB (a huge
    // page of the mapping then holds parts of two members' regions).
    for base_bytes in [1000usize, (2 << 20) + 24, 5 << 20] {
        let asked = base_bytes + 8 * rank;
        let most = base_bytes + 8 * (size - 1);
        let what = format!("{base_bytes} bytes asked on rank 0, {size} rank(s)");
        let window = GroupWindow::new(&world, asked).expect(&what);
        let Some(window) = window else {
            assert_eq!(size, 1, "{what}: no window on {size} ranks");
            continue;
        };
        assert!(size > 1, "{what}: a window on one rank");
        let other = GroupWindow::new(&world, asked).expect(&what).expect(&what);
        assert_eq!(window.region_bytes(), most.div_ceil(64) * 64, "{what}");
        assert_eq!((window.members(), window.me()), (size, rank), "{what}");
        assert_eq!(
            window.base::<u8>() as usize % 64,
            0,
            "{what}: region 0 off a line"
        );
        if window.on_huge_boundaries() {
            assert!(
                window.region_bytes() >= 2 << 20,
                "{what}: small regions in a mapping"
            );
            assert_eq!(
                window.base::<u8>() as usize % (2 << 20),
                0,
                "{what}: mapping off a 2 MiB boundary"
            );
        } else if window.region_bytes() >= 2 << 20 {
            // Legitimate where /dev/shm is missing or full; say so rather than pass silently.
            eprintln!("mpi_window: {what}: fell back to an MPI window");
        }
        let words = window.region_len::<u64>();
        assert_eq!(
            window.own::<u64>() as usize,
            window.base::<u64>() as usize + rank * window.region_bytes(),
            "{what}: regions not contiguous"
        );
        // SAFETY: nobody writes the windows before the first sync below.
        let all = unsafe { window.all::<u64>() };
        assert_eq!(all.len(), size * words, "{what}");
        let dirty: Vec<(usize, u64)> = (all.iter().copied().enumerate())
            .filter(|&(_, v)| v != 0)
            .take(4)
            .collect();
        assert!(dirty.is_empty(), "{what}: not zeroed: {dirty:?}");
        // Nobody writes before every member has looked.
        window.sync().expect(&what);
        for round in 1..=3u64 {
            let own = window.own::<u64>();
            let mine = other.own::<u64>();
            for i in 0..words {
                // SAFETY: this member's own regions, which nobody reads until the sync.
                unsafe {
                    own.add(i).write(value(rank, i, round));
                    mine.add(i).write(!value(rank, i, round));
                }
            }
            if round == 2 {
                GroupWindow::sync_all(&[&window, &other]).expect(&what);
            } else {
                window.sync().expect(&what);
                other.sync().expect(&what);
            }
            // SAFETY: nobody writes the windows until the sync after the check.
            let (all, others) = unsafe { (window.all::<u64>(), other.all::<u64>()) };
            for q in 0..size {
                for i in (0..words).step_by(509).chain([words - 1]) {
                    let (got, other_got) = (all[q * words + i], others[q * words + i]);
                    assert_eq!(got, value(q, i, round), "{what}: member {q} word {i}");
                    assert_eq!(other_got, !value(q, i, round), "{what}: second window");
                }
            }
            window.sync().expect(&what);
        }
    }
    world.barrier();
    mpi.pass();
}
