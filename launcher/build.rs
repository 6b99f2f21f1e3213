//! Embeds Kiln's icon in `kilnw.exe` when building on Windows for Windows.

fn main() {
    println!("cargo:rerun-if-changed=../packaging/icons/kiln.ico");
    #[cfg(windows)]
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("windows") {
        let mut resource = winresource::WindowsResource::new();
        resource.set_icon("../packaging/icons/kiln.ico");
        if let Err(e) = resource.compile() {
            // A missing icon is cosmetic; the launcher still works.
            println!("cargo:warning=kilnw.exe has no icon: {e}");
        }
    }
}
