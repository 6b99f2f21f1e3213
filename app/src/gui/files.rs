//! Where the window's files come from and go. On a desktop: the system's file dialogs (rfd),
//! which block the frame while the person chooses, as every desktop app's do. In a browser page
//! an export is a download, and a data folder is the browser's folder chooser: the page reads
//! the chosen folder's files into memory (`kiln_core::data::page_files`), and the loaders find them
//! there under the folder's name. The browser answers after the frame that asked, so a page's
//! choice arrives through [`arrived`].

use std::path::{Path, PathBuf};

/// What a page answers where the desktop would open a file dialog it has no page equivalent for.
#[cfg(target_arch = "wasm32")]
pub const NOT_IN_PAGE: &str = "a browser page cannot open this computer's files here: \
     use Kiln's desktop app for this";

/// Most bytes of chosen files a page keeps: its memory is 4 GiB at most, shared with the
/// decoded images and the model.
#[cfg(target_arch = "wasm32")]
const MAX_CHOSEN_BYTES: f64 = 1.5e9;

/// What a chosen data folder is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataChoice {
    /// A folder of class sub-folders of images.
    ImageFolder,
    /// The folder holding MNIST, Fashion-MNIST or CIFAR-10 files.
    NamedSetFolder,
    /// A folder dropped on a page: the named set's files when the form names one, else an
    /// image folder.
    Dropped,
}

/// What a single file chosen in a page is for.
#[cfg(target_arch = "wasm32")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileChoice {
    /// A run folder archive to import (*Import run…*).
    RunArchive,
    /// An image for *Try the model*.
    ImageToTry,
    /// Pretrained weights to start from: a `.safetensors` file, which a page can read.
    Weights,
}

#[cfg(target_arch = "wasm32")]
impl FileChoice {
    /// The chooser's `accept`: the extensions and media types offered.
    fn accept(self) -> &'static str {
        match self {
            Self::RunArchive => ".tar,.tgz,.gz,application/x-tar,application/gzip",
            Self::ImageToTry => ".png,.jpg,.jpeg,image/png,image/jpeg",
            Self::Weights => ".safetensors",
        }
    }
}

#[cfg(not(target_arch = "wasm32"))]
impl DataChoice {
    /// The chooser's title.
    fn title(self) -> &'static str {
        match self {
            Self::ImageFolder => "Folder with one sub-folder of images per class",
            Self::NamedSetFolder | Self::Dropped => "Folder holding the data set's files",
        }
    }
}

/// Asks for a data folder for `choice`. On a desktop the system's dialog answers now
/// (`Ok(None)` when the person cancelled); in a page the browser's folder chooser opens, this
/// answers `Ok(None)`, and the folder, once its files are read, comes from [`arrived`] after
/// `ctx` repaints.
pub fn choose_data_folder(
    choice: DataChoice,
    ctx: &egui::Context,
) -> Result<Option<PathBuf>, String> {
    #[cfg(not(target_arch = "wasm32"))]
    {
        let _ = ctx;
        pick_folder(choice.title(), None)
    }
    #[cfg(target_arch = "wasm32")]
    {
        page::open_folder_chooser(choice, ctx.clone())?;
        Ok(None)
    }
}

/// The data folders a page's chooser delivered since the last call, each read into memory or
/// the sentence why not; always empty on a desktop, whose dialogs answer at once.
pub fn arrived() -> Vec<(DataChoice, Result<PathBuf, String>)> {
    #[cfg(not(target_arch = "wasm32"))]
    {
        Vec::new()
    }
    #[cfg(target_arch = "wasm32")]
    {
        page::ARRIVED.with(|arrived| arrived.take())
    }
}

/// Listens for folders dropped anywhere on the page and delivers each, read into memory, through
/// [`arrived`] as [`DataChoice::Dropped`]; eframe hands the window a dropped folder's name only.
#[cfg(target_arch = "wasm32")]
pub fn listen_for_dropped_folders(ctx: &egui::Context) -> Result<(), String> {
    page::listen_for_dropped_folders(ctx.clone())
}

/// Opens the browser's chooser for one file for `choice`; its name and bytes, once read, come
/// from [`arrived_files`] after `ctx` repaints.
#[cfg(target_arch = "wasm32")]
pub fn choose_file(choice: FileChoice, ctx: &egui::Context) -> Result<(), String> {
    page::open_file_chooser(choice, ctx.clone())
}

/// The single files a page's chooser delivered since the last call: what each is for, and its
/// name and bytes or the sentence why not.
#[cfg(target_arch = "wasm32")]
pub fn arrived_files() -> Vec<(FileChoice, Result<(String, Vec<u8>), String>)> {
    page::FILES.with(|files| files.take())
}

/// Delivers a file (its name and bytes, or why the browser could not read it) through
/// [`arrived_files`] as the page's chooser would: how a dropped file arrives, and the chooser's
/// last step, which the page's check drives directly.
#[cfg(target_arch = "wasm32")]
pub fn receive_file(
    choice: FileChoice,
    file: Result<(String, Vec<u8>), String>,
    ctx: &egui::Context,
) {
    page::deliver_file(choice, file, ctx);
}

/// Keeps `files` (paths starting with the chosen folder's name, and their bytes) as a page's
/// chooser would, and delivers the folder through [`arrived`]: the chooser's last step, which
/// the page's check drives directly since a script cannot fill a folder chooser.
#[cfg(target_arch = "wasm32")]
pub fn receive(choice: DataChoice, files: Vec<(String, Vec<u8>)>, ctx: &egui::Context) {
    page::deliver(choice, page::keep(files), ctx);
}

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

/// Asks for one file whose extension is one of `extensions` (`kind` names them); a page asks
/// with [`choose_file`] instead.
#[cfg(not(target_arch = "wasm32"))]
pub fn pick_file(title: &str, kind: &str, extensions: &[&str]) -> Option<PathBuf> {
    pick_file_of(title, &[(kind, extensions)])
}

/// Asks for one file, offering `filters` (a name and its extensions; `*` for any) in order.
#[cfg(not(target_arch = "wasm32"))]
pub fn pick_file_of(title: &str, filters: &[(&str, &[&str])]) -> Option<PathBuf> {
    let mut dialog = rfd::FileDialog::new().set_title(title);
    for (name, extensions) in filters {
        dialog = dialog.add_filter(*name, extensions);
    }
    dialog.pick_file()
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

/// The browser's side of choosing a data folder.
#[cfg(target_arch = "wasm32")]
mod page {
    use std::cell::RefCell;
    use std::path::{Component, Path, PathBuf};

    use wasm_bindgen::JsCast;
    use wasm_bindgen::closure::Closure;

    use super::{DataChoice, FileChoice, MAX_CHOSEN_BYTES};

    /// A chosen file's name and bytes, or why there are none.
    pub(super) type FileOutcome = Result<(String, Vec<u8>), String>;

    thread_local! {
        pub(super) static ARRIVED: RefCell<Vec<(DataChoice, Result<PathBuf, String>)>> =
            const { RefCell::new(Vec::new()) };
        pub(super) static FILES: RefCell<Vec<(FileChoice, FileOutcome)>> =
            const { RefCell::new(Vec::new()) };
    }

    /// Opens the browser's folder chooser (an `<input type=file webkitdirectory>`).
    pub(super) fn open_folder_chooser(
        choice: DataChoice,
        ctx: egui::Context,
    ) -> Result<(), String> {
        open_chooser(Chooser::Folder, move |files| {
            deliver(choice, files.and_then(keep), &ctx);
        })
    }

    /// Opens the browser's file chooser for one file for `choice`.
    pub(super) fn open_file_chooser(choice: FileChoice, ctx: egui::Context) -> Result<(), String> {
        open_chooser(Chooser::File(choice), move |files| {
            let file = files.and_then(|files| {
                files
                    .into_iter()
                    .next()
                    .ok_or_else(|| "no file was chosen".to_owned())
            });
            deliver_file(choice, file, &ctx);
        })
    }

    /// What a chooser asks the visitor for.
    enum Chooser {
        /// A folder, all its files.
        Folder,
        /// One file.
        File(FileChoice),
    }

    /// Opens a browser chooser and hands `chosen` the files once read; the click that asked
    /// still counts as the person's gesture, which the browser requires.
    fn open_chooser(
        chooser: Chooser,
        chosen: impl FnOnce(Result<Vec<(String, Vec<u8>)>, String>) + 'static,
    ) -> Result<(), String> {
        let failed = |e: wasm_bindgen::JsValue| format!("the browser opened no chooser: {e:?}");
        let document = web_sys::window()
            .and_then(|window| window.document())
            .ok_or("this page has no document to choose files in")?;
        let input = document
            .create_element("input")
            .map_err(failed)?
            .dyn_into::<web_sys::HtmlInputElement>()
            .map_err(|_| "the browser made no file input".to_owned())?;
        input.set_type("file");
        match chooser {
            Chooser::Folder => {
                input.set_multiple(true);
                input.set_attribute("webkitdirectory", "").map_err(failed)?;
            }
            Chooser::File(choice) => input.set_accept(choice.accept()),
        }
        let input_again = input.clone();
        // Called once, then freed; a cancelled chooser never calls it and leaves one closure.
        let on_change = Closure::once_into_js(move || {
            wasm_bindgen_futures::spawn_local(async move {
                chosen(read_files(&input_again).await);
            });
        });
        input
            .add_event_listener_with_callback("change", on_change.unchecked_ref())
            .map_err(failed)?;
        input.click();
        Ok(())
    }

    /// Every file of the chooser, its path within the chosen folder and its bytes.
    async fn read_files(
        input: &web_sys::HtmlInputElement,
    ) -> Result<Vec<(String, Vec<u8>)>, String> {
        let list = input.files().ok_or("the browser gave the page no files")?;
        let files = (0..list.length()).filter_map(|i| list.get(i)).map(|file| {
            let relative = js_sys::Reflect::get(&file, &"webkitRelativePath".into())
                .ok()
                .and_then(|path| path.as_string())
                .filter(|path| !path.is_empty())
                .unwrap_or_else(|| file.name());
            (relative, file)
        });
        read_all(files.collect()).await
    }

    /// The bytes of every file, under its path; refused before anything is read when they would
    /// not fit in a page's memory.
    async fn read_all(
        files: Vec<(String, web_sys::File)>,
    ) -> Result<Vec<(String, Vec<u8>)>, String> {
        let total_bytes: f64 = files.iter().map(|(_, file)| file.size()).sum();
        if total_bytes > MAX_CHOSEN_BYTES {
            return Err(format!(
                "the chosen folder holds {:.1} GB, more than the {:.1} GB a page can keep; choose a smaller folder, or use Kiln's desktop app",
                total_bytes / 1e9,
                MAX_CHOSEN_BYTES / 1e9
            ));
        }
        let mut out = Vec::with_capacity(files.len());
        for (path, file) in files {
            let buffer = wasm_bindgen_futures::JsFuture::from(file.array_buffer())
                .await
                .map_err(|e| format!("the browser could not read {path}: {e:?}"))?;
            out.push((path, js_sys::Uint8Array::new(&buffer).to_vec()));
        }
        Ok(out)
    }

    /// Listens on the page's window before the canvas sees the drop (eframe's handler on the
    /// canvas stops it there): a drop's entries can only be asked for during the event.
    pub(super) fn listen_for_dropped_folders(ctx: egui::Context) -> Result<(), String> {
        let window = web_sys::window().ok_or("this page has no window to drop folders on")?;
        let on_drop =
            Closure::<dyn FnMut(web_sys::DragEvent)>::new(move |event: web_sys::DragEvent| {
                let Some(transfer) = event.data_transfer() else {
                    return;
                };
                let items = transfer.items();
                let folder = (0..items.length())
                    .filter_map(|i| items.get(i))
                    .filter_map(|item| item.webkit_get_as_entry().ok().flatten())
                    .find(|entry| entry.is_directory());
                let Some(folder) = folder else {
                    return;
                };
                let ctx = ctx.clone();
                wasm_bindgen_futures::spawn_local(async move {
                    let files = match dropped_files(folder).await {
                        Ok(files) => read_all(files).await,
                        Err(reason) => Err(reason),
                    };
                    deliver(DataChoice::Dropped, files.and_then(keep), &ctx);
                });
            });
        window
            .add_event_listener_with_callback_and_bool(
                "drop",
                on_drop.as_ref().unchecked_ref(),
                true,
            )
            .map_err(|e| format!("the page cannot take dropped folders: {e:?}"))?;
        // Listens for the page's life.
        on_drop.forget();
        Ok(())
    }

    /// Every file under the dropped folder `root`, with its path from the folder's name on.
    async fn dropped_files(
        root: web_sys::FileSystemEntry,
    ) -> Result<Vec<(String, web_sys::File)>, String> {
        let failed = |e: wasm_bindgen::JsValue| {
            format!("the browser could not read the dropped folder: {e:?}")
        };
        let mut out = Vec::new();
        let mut pending = vec![root];
        while let Some(entry) = pending.pop() {
            if entry.is_directory() {
                let reader = entry
                    .unchecked_into::<web_sys::FileSystemDirectoryEntry>()
                    .create_reader();
                // Each call gives the next hundred or so entries, then an empty list.
                loop {
                    let batch: js_sys::Array = callback_future(|resolve, reject| {
                        reader.read_entries_with_callback_and_callback(resolve, reject)
                    })
                    .await
                    .map_err(failed)?
                    .unchecked_into();
                    if batch.length() == 0 {
                        break;
                    }
                    pending.extend(batch.iter().map(|child| child.unchecked_into()));
                }
            } else if entry.is_file() {
                let path = entry.full_path().trim_start_matches('/').to_owned();
                let file_entry = entry.unchecked_into::<web_sys::FileSystemFileEntry>();
                let file = callback_future(|resolve, reject| {
                    file_entry.file_with_callback_and_callback(resolve, reject);
                    Ok(())
                })
                .await
                .map_err(failed)?;
                out.push((path, file.unchecked_into()));
            }
        }
        Ok(out)
    }

    /// The value a callback-style browser call hands its success callback.
    async fn callback_future(
        call: impl FnOnce(&js_sys::Function, &js_sys::Function) -> Result<(), wasm_bindgen::JsValue>,
    ) -> Result<wasm_bindgen::JsValue, wasm_bindgen::JsValue> {
        let mut call = Some(call);
        let mut refused = None;
        let promise = js_sys::Promise::new(&mut |resolve, reject| {
            if let Some(call) = call.take()
                && let Err(e) = call(&resolve, &reject)
            {
                refused = Some(e);
            }
        });
        if let Some(e) = refused {
            return Err(e);
        }
        wasm_bindgen_futures::JsFuture::from(promise).await
    }

    /// Keeps `files` for the loaders; the chosen folder is their paths' first name.
    pub(super) fn keep(files: Vec<(String, Vec<u8>)>) -> Result<PathBuf, String> {
        let top = files
            .first()
            .and_then(|(path, _)| match Path::new(path).components().next() {
                Some(Component::Normal(name)) => Some(PathBuf::from(name)),
                _ => None,
            })
            .ok_or("the chosen folder holds no files; choose one with the data set in it")?;
        if files
            .iter()
            .any(|(path, _)| !Path::new(path).starts_with(&top))
        {
            return Err(
                "the chosen files are not all in one folder; choose the folder itself".into(),
            );
        }
        kiln_core::data::page_files::keep(files)?;
        Ok(top)
    }

    pub(super) fn deliver(
        choice: DataChoice,
        outcome: Result<PathBuf, String>,
        ctx: &egui::Context,
    ) {
        ARRIVED.with(|arrived| arrived.borrow_mut().push((choice, outcome)));
        ctx.request_repaint();
    }

    pub(super) fn deliver_file(choice: FileChoice, file: FileOutcome, ctx: &egui::Context) {
        FILES.with(|files| files.borrow_mut().push((choice, file)));
        ctx.request_repaint();
    }
}
