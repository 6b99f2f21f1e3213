//! The browser's storage of a page's runs, so they outlast a reload: IndexedDB, where a page may
//! keep far more than local storage's few megabytes, one record per run.
//!
//! ```text
//! IndexedDB database "kiln" (version 1)
//!   object store "runs"   key: the run folder's name   value: its run folder archive (bytes)
//! ```
//!
//! The page's memory ([`run_folder::page_runs`]) stays what the window reads; this module mirrors
//! it. Jobs run one after another in the order they were asked for (a run kept after each epoch
//! is never overwritten by an older copy), each packing the run when its turn comes. What a job
//! has to say reaches the window through [`news`].

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::path::{Path, PathBuf};

use kiln_core::run_folder::page_runs;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{IdbDatabase, IdbObjectStore, IdbRequest, IdbTransaction, IdbTransactionMode};

const DATABASE: &str = "kiln";
const STORE: &str = "runs";

/// What the window hears from the storage.
pub enum News {
    /// The runs of an earlier visit are back in the page's memory.
    Restored(page_runs::Restored),
    /// A job failed; the sentence says what was not kept.
    Failed(String),
}

enum Job {
    Restore,
    Keep(PathBuf),
    Forget(String),
}

thread_local! {
    static JOBS: RefCell<VecDeque<Job>> = const { RefCell::new(VecDeque::new()) };
    static WORKING: Cell<bool> = const { Cell::new(false) };
    static NEWS: RefCell<Vec<News>> = const { RefCell::new(Vec::new()) };
    static OPENED: RefCell<Option<IdbDatabase>> = const { RefCell::new(None) };
    static WINDOW: RefCell<Option<egui::Context>> = const { RefCell::new(None) };
}

/// Puts the runs this browser kept back among the page's runs; the window hears of it through
/// [`news`] after `ctx` repaints.
pub fn restore(ctx: &egui::Context) {
    WINDOW.with(|window| *window.borrow_mut() = Some(ctx.clone()));
    ask(Job::Restore);
}

/// Keeps `run` as it is in the page's memory now (replacing what was kept under its name).
pub fn keep(run: &Path) {
    ask(Job::Keep(run.to_owned()));
}

/// Forgets `run`, deleted from the page.
pub fn forget(run: &Path) {
    if let Some(name) = page_runs::stored_name(run) {
        ask(Job::Forget(name));
    }
}

/// Whether a job is waiting or under way: a page closed now may lose it.
pub fn busy() -> bool {
    WORKING.get()
}

/// What the storage's jobs had to say since the last call.
pub fn news() -> Vec<News> {
    NEWS.with(|news| news.take())
}

fn ask(job: Job) {
    JOBS.with(|jobs| jobs.borrow_mut().push_back(job));
    if !WORKING.replace(true) {
        wasm_bindgen_futures::spawn_local(work());
    }
}

/// Does the jobs in order until none is left.
async fn work() {
    while let Some(job) = JOBS.with(|jobs| jobs.borrow_mut().pop_front()) {
        let news = match job {
            Job::Restore => Some(
                read_all()
                    .await
                    .map(|kept| News::Restored(page_runs::restore(kept)))
                    .unwrap_or_else(|reason| {
                        News::Failed(format!(
                            "the runs this browser kept could not be read ({reason})"
                        ))
                    }),
            ),
            Job::Keep(run) => write(&run).await.err().map(|reason| {
                News::Failed(format!(
                    "this browser did not keep {} ({reason}); Archive… downloads it",
                    run.display()
                ))
            }),
            Job::Forget(name) => delete(&name).await.err().map(|reason| {
                News::Failed(format!(
                    "this browser still keeps {name} ({reason}); it comes back on reload"
                ))
            }),
        };
        if let Some(news) = news {
            NEWS.with(|all| all.borrow_mut().push(news));
            WINDOW.with(|window| window.borrow().as_ref().map(egui::Context::request_repaint));
        }
    }
    WORKING.set(false);
}

/// Every kept run: its folder's name and archive.
async fn read_all() -> Result<Vec<(String, Vec<u8>)>, String> {
    let (transaction, store) = open_store(IdbTransactionMode::Readonly).await?;
    let keys = store.get_all_keys().map_err(described)?;
    let values = store.get_all().map_err(described)?;
    completed(&transaction).await?;
    let keys: js_sys::Array = keys.result().map_err(described)?.unchecked_into();
    let values: js_sys::Array = values.result().map_err(described)?.unchecked_into();
    Ok(keys
        .iter()
        .zip(values.iter())
        .filter_map(|(key, value)| {
            let bytes = value.dyn_into::<js_sys::Uint8Array>().ok()?.to_vec();
            Some((key.as_string()?, bytes))
        })
        .collect())
}

/// Keeps `run`'s archive; a run deleted before its turn came is left alone.
async fn write(run: &Path) -> Result<(), String> {
    let Some(bytes) = page_runs::packed(run) else {
        return Ok(());
    };
    let bytes = bytes.map_err(|e| e.to_string())?;
    let name = page_runs::stored_name(run).ok_or("the run has no folder name")?;
    let (transaction, store) = open_store(IdbTransactionMode::Readwrite).await?;
    let value = js_sys::Uint8Array::from(bytes.as_slice());
    store
        .put_with_key(&value, &JsValue::from_str(&name))
        .map_err(described)?;
    // A full storage shows only when the transaction commits (QuotaExceededError).
    completed(&transaction).await
}

async fn delete(name: &str) -> Result<(), String> {
    let (transaction, store) = open_store(IdbTransactionMode::Readwrite).await?;
    store.delete(&JsValue::from_str(name)).map_err(described)?;
    completed(&transaction).await
}

async fn open_store(mode: IdbTransactionMode) -> Result<(IdbTransaction, IdbObjectStore), String> {
    let database = database().await?;
    let transaction = database
        .transaction_with_str_and_mode(STORE, mode)
        .map_err(described)?;
    let store = transaction.object_store(STORE).map_err(described)?;
    Ok((transaction, store))
}

/// The page's database, opened once (and created on a first visit).
async fn database() -> Result<IdbDatabase, String> {
    if let Some(opened) = OPENED.with(|opened| opened.borrow().clone()) {
        return Ok(opened);
    }
    let factory = web_sys::window()
        .and_then(|window| window.indexed_db().ok().flatten())
        .ok_or("this browser gives the page no storage (a private window may not)")?;
    let request = factory.open_with_u32(DATABASE, 1).map_err(described)?;
    let opening = request.clone();
    let create = Closure::<dyn FnMut()>::new(move || {
        if let Ok(database) = opening.result() {
            let _ = database
                .unchecked_into::<IdbDatabase>()
                .create_object_store(STORE);
        }
    });
    request.set_onupgradeneeded(Some(create.as_ref().unchecked_ref()));
    let opened = settled(&request).await;
    request.set_onupgradeneeded(None);
    let database: IdbDatabase = opened?.unchecked_into();
    OPENED.with(|opened| *opened.borrow_mut() = Some(database.clone()));
    Ok(database)
}

/// The result of `request` once the browser has answered it.
async fn settled(request: &IdbRequest) -> Result<JsValue, String> {
    let answered = JsFuture::from(js_sys::Promise::new(&mut |resolve, reject| {
        request.set_onsuccess(Some(&resolve));
        request.set_onerror(Some(&reject));
    }))
    .await;
    request.set_onsuccess(None);
    request.set_onerror(None);
    match answered {
        Ok(_) => request.result().map_err(described),
        Err(_) => Err(request.error().ok().flatten().map_or_else(
            || "the browser gave no reason".to_owned(),
            |e| exception(&e),
        )),
    }
}

/// Waits for `transaction` to commit; one aborted (storage full, a failed request) says why.
async fn completed(transaction: &IdbTransaction) -> Result<(), String> {
    let answered = JsFuture::from(js_sys::Promise::new(&mut |resolve, reject| {
        transaction.set_oncomplete(Some(&resolve));
        transaction.set_onabort(Some(&reject));
    }))
    .await;
    transaction.set_oncomplete(None);
    transaction.set_onabort(None);
    answered.map(|_| ()).map_err(|_| {
        transaction.error().map_or_else(
            || "the browser gave no reason".to_owned(),
            |e| exception(&e),
        )
    })
}

fn exception(e: &web_sys::DomException) -> String {
    format!("{}: {}", e.name(), e.message())
}

fn described(e: JsValue) -> String {
    match e.dyn_ref::<web_sys::DomException>() {
        Some(e) => exception(e),
        None => format!("{e:?}"),
    }
}
