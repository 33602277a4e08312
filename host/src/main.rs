//! The `rekon` binary. See `rekon --help`.

fn main() -> std::process::ExitCode {
    rekon_host::cli::main()
}
