//! The `rekon` binary: the command line over the `rekon_host` library.
//! See `rekon --help`.

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
