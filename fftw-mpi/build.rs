//! Makes the library depend on the program's serial FFTW in both precisions (libfftw3,
//! libfftw3f), loaded after it: the generic plan calls it does not handle, and the wisdom
//! and cleanup calls, go to them through `dlsym(RTLD_NEXT)`, which finds nothing in a
//! library that was never loaded (a program that calls only fftw_mpi_* functions, linked
//! with --as-needed, would otherwise not load libfftw3 at all).

fn main() {
    // Nothing but this file decides the link arguments: without this line any change in the
    // package (its tests included) would rerun the script and relink the cdylib.
    println!("cargo:rerun-if-changed=build.rs");
    println!(
        "cargo:rustc-cdylib-link-arg=-Wl,--push-state,--no-as-needed,-lfftw3,-lfftw3f,--pop-state"
    );
}
