//! Where the window's files come from and go. On a desktop: the system's file dialogs (rfd),
//! which block the frame while the person chooses, as every desktop app's do. In a browser page
//! an export is a download; choosing a file or folder of this computer gets a sentence until the
//! page reads the visitor's files.

use std::path::{Path, PathBuf};

/// What a page answers where the desktop would open a file dialog.
#[cfg(target_arch = "wasm32")]
pub const NOT_IN_PAGE: &str = "a browser page cannot open this computer's files and folders yet: \
     train on the built-in data set here, or use Kiln's desktop app for your own images";

/// Asks for a folder, starting in `start`; `Ok(None)` when the person cancelled.
pub fn pick_folder(title: &str, start: Option<&Path>) -> Result<Option<PathBuf>, String> {
    #[cfg(not(target_arch = "wasm32"))]
    {
        let mut dialog = rfd::FileDialog::new().set_title(title);
        if let Some(start) = start {
            dialog = dialog.set_directory(start);
        }
        Ok(dialog.pick_folder())
    }
    #[cfg(target_arch = "wasm32")]
    {
        let _ = (title, start);
        Err(NOT_IN_PAGE.to_owned())
    }
}

/// Asks for one file whose extension is one of `extensions` (`kind` names them).
pub fn pick_file(title: &str, kind: &str, extensions: &[&str]) -> Result<Option<PathBuf>, String> {
    #[cfg(not(target_arch = "wasm32"))]
    {
        Ok(rfd::FileDialog::new()
            .set_title(title)
            .add_filter(kind, extensions)
            .pick_file())
    }
    #[cfg(target_arch = "wasm32")]
    {
        let _ = (title, kind, extensions);
        Err(NOT_IN_PAGE.to_owned())
    }
}

/// Asks where to save a file, offering `filters` (a name and its extensions) and `file_name`.
#[cfg(not(target_arch = "wasm32"))]
pub fn save_as(title: &str, filters: &[(&str, &[&str])], file_name: &str) -> Option<PathBuf> {
    let mut dialog = rfd::FileDialog::new().set_title(title);
    for (name, extensions) in filters {
        dialog = dialog.add_filter(*name, extensions);
    }
    dialog.set_file_name(file_name).save_file()
}

/// Hands `bytes` to the browser as a download named `file_name` (the browser asks where, or
/// puts it in the visitor's downloads folder).
#[cfg(target_arch = "wasm32")]
pub fn download(file_name: &str, bytes: &[u8], mime: &str) -> Result<(), String> {
    use wasm_bindgen::JsCast;
    let failed = |e: wasm_bindgen::JsValue| format!("the browser refused the download: {e:?}");
    let parts = js_sys::Array::of1(&js_sys::Uint8Array::from(bytes));
    let options = web_sys::BlobPropertyBag::new();
    options.set_type(mime);
    let blob =
        web_sys::Blob::new_with_u8_array_sequence_and_options(&parts, &options).map_err(failed)?;
    let url = web_sys::Url::create_object_url_with_blob(&blob).map_err(failed)?;
    let document = web_sys::window()
        .and_then(|window| window.document())
        .ok_or("this page has no document to download from")?;
    let link = document
        .create_element("a")
        .map_err(failed)?
        .dyn_into::<web_sys::HtmlAnchorElement>()
        .map_err(|_| "the browser made no link for the download".to_owned())?;
    link.set_href(&url);
    link.set_download(file_name);
    link.click();
    // Some browsers read the bytes after the click returns: the URL that keeps them alive goes
    // a minute later.
    wasm_bindgen_futures::spawn_local(async move {
        kiln_core::executor::sleep_ms(60_000).await;
        let _ = web_sys::Url::revoke_object_url(&url);
    });
    Ok(())
}
