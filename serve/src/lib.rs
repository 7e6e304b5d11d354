//! The store over HTTP (`polytune serve`), read-only JSON (axum), each kernel's tuned
//! file (`/export/KERNEL`, the bytes `polytune export` writes), and the report as a page
//! at `/` that reloads itself while campaigns run. Loopback by default; bound
//! anywhere else it requires a bearer token, so a store is never open to a network by a
//! typo.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use axum::extract::{Path, Query, Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde::Deserialize;
use store::Store;
use tuner::error::{Context, Error, Result};

/// Where to listen, who may read, and which store.
#[derive(Debug, Clone)]
pub struct Options {
    /// Port 0 picks a free one (told to `run`'s `listening`).
    pub addr: SocketAddr,
    /// A file holding the token requests must carry (`Authorization: Bearer TOKEN`);
    /// required when the address is not a loopback one.
    pub token_file: Option<PathBuf>,
    /// The existing store (a SQLite path or a `postgres://` URL; default: the user's data
    /// directory).
    pub db: Option<String>,
}

struct App {
    store: Store,
    token: Option<String>,
    /// The page's explanations of winners, made once each.
    explained: tuner::explain::Cache,
}

type Shared = Arc<App>;

/// Serves until Ctrl-C; `listening` is told the bound address (with the
/// port chosen for port 0) once requests are taken.
pub fn run(options: &Options, listening: impl FnOnce(SocketAddr)) -> Result<()> {
    let token = match &options.token_file {
        Some(path) => {
            let t = std::fs::read_to_string(path).with_context(|| format!("{}: cannot read the token", path.display()))?;
            let t = t.trim().to_string();
            if t.len() < 16 {
                return Err(Error::input(format!("{}: the token must be at least 16 characters", path.display())));
            }
            Some(t)
        }
        None if options.addr.ip().is_loopback() => None,
        None => return Err(Error::input(format!(
            "{} is not a loopback address: give --token-file so that only holders of the token can read the store",
            options.addr
        ))),
    };
    let store = tuner::stored::open_existing(options.db.as_deref())?;
    let app = Arc::new(App { store, token, explained: Default::default() });
    let router = Router::new()
        .route("/", get(page))
        .route("/best/{kernel}", get(best))
        .route("/machines", get(machines))
        .route("/campaigns", get(campaigns))
        .route("/measurements", get(measurements))
        .route("/export/{kernel}", get(export))
        .layer(middleware::from_fn_with_state(app.clone(), authorize))
        .with_state(app);
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let addr = options.addr;
    rt.block_on(async move {
        let listener =
            tokio::net::TcpListener::bind(addr).await.with_context(|| format!("cannot listen on {addr}"))?;
        listening(listener.local_addr()?);
        axum::serve(listener, router)
            .with_graceful_shutdown(async {
                let _ = tokio::signal::ctrl_c().await;
            })
            .await
            .context("serving")
    })
}

async fn authorize(State(app): State<Shared>, request: Request, next: Next) -> Response {
    if let Some(token) = &app.token {
        let given = request.headers().get(header::AUTHORIZATION).and_then(|v| v.to_str().ok());
        if given.and_then(|v| v.strip_prefix("Bearer ")) != Some(token.as_str()) {
            return error(
                StatusCode::UNAUTHORIZED,
                "a valid `Authorization: Bearer TOKEN` header is required".into(),
            );
        }
    }
    next.run(request).await
}

fn error(status: StatusCode, message: String) -> Response {
    (status, Json(serde_json::json!({ "error": message }))).into_response()
}

/// Runs a store query off the async threads (the store blocks on its own runtime).
async fn blocking<T: serde::Serialize + Send + 'static>(
    app: Shared,
    query: impl FnOnce(&Store) -> Result<Option<T>, store::StoreError> + Send + 'static,
) -> Response {
    match tokio::task::spawn_blocking(move || query(&app.store)).await {
        Ok(Ok(Some(v))) => Json(v).into_response(),
        Ok(Ok(None)) => error(StatusCode::NOT_FOUND, "nothing matches".into()),
        Ok(Err(e)) => error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    }
}

/// How often the page reloads itself, in seconds.
const PAGE_REFRESH_S: u32 = 30;

/// The report as a page (`polytune report --format html`, with a link to
/// each kernel's tuned file), made anew for each request.
async fn page(State(app): State<Shared>) -> Response {
    let made = tokio::task::spawn_blocking(move || {
        tuner::explain::report(&app.store, &store::ReportFilter::default(), Some(&app.explained))
            .map(|r| reports::html::render_served(&r, PAGE_REFRESH_S))
    });
    match made.await {
        Ok(Ok(html)) => ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], html).into_response(),
        Ok(Err(e)) => error(StatusCode::INTERNAL_SERVER_ERROR, format!("{e:#}")),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    }
}

#[derive(Deserialize)]
struct BestQuery {
    machine: Option<String>,
    dataset: Option<String>,
}

async fn best(State(app): State<Shared>, Path(kernel): Path<String>, Query(q): Query<BestQuery>) -> Response {
    blocking(app, move |s| s.best(&kernel, q.machine.as_deref(), q.dataset.as_deref())).await
}

async fn machines(State(app): State<Shared>) -> Response {
    blocking(app, |s| s.machines().map(Some)).await
}

async fn campaigns(State(app): State<Shared>) -> Response {
    blocking(app, |s| s.campaign_progress().map(Some)).await
}

#[derive(Deserialize)]
struct MeasurementsQuery {
    kernel: Option<String>,
    limit: Option<usize>,
}

async fn measurements(State(app): State<Shared>, Query(q): Query<MeasurementsQuery>) -> Response {
    let limit = q.limit.unwrap_or(100).min(10_000);
    blocking(app, move |s| s.history(q.kernel.as_deref(), limit).map(Some)).await
}

#[derive(Deserialize)]
struct ExportQuery {
    machine: Option<String>,
    all: Option<bool>,
    dataset: Option<String>,
}

/// The tuned file `polytune export KERNEL` writes (verified first), as C text; a kernel or a
/// winner the store does not have is a 404, a file that cannot be exported a 422.
async fn export(
    State(app): State<Shared>,
    Path(kernel): Path<String>,
    Query(q): Query<ExportQuery>,
) -> Response {
    use tuner::export::{Machines, Request};
    let dataset = match q.dataset.map(|d| serde_json::from_value(serde_json::Value::String(d.to_uppercase())))
    {
        None => None,
        Some(Ok(d)) => Some(d),
        Some(Err(_)) => {
            return error(StatusCode::BAD_REQUEST, "dataset: MINI, SMALL, MEDIUM, LARGE or EXTRALARGE".into())
        }
    };
    let machines = match (q.all, q.machine) {
        (Some(true), _) => Machines::All,
        (_, Some(m)) => Machines::Named(vec![m]),
        _ => Machines::Best,
    };
    let request = Request { kernel, machines, dataset, profile: "default".into() };
    match tokio::task::spawn_blocking(move || tuner::export::export(&app.store, &request)).await {
        Ok(Ok(e)) if e.cuda.is_some() => error(
            StatusCode::UNPROCESSABLE_ENTITY,
            "the winner is a GPU variant, exported as two files (the C file and its CUDA unit): run `polytune export \
             KERNEL -o FILE`"
                .into(),
        ),
        Ok(Ok(e)) => ([(header::CONTENT_TYPE, "text/x-c; charset=utf-8")], e.text).into_response(),
        Ok(Err(e)) if e.is_no_result() => {
            error(StatusCode::NOT_FOUND, format!("{e:#}"))
        }
        Ok(Err(e)) => error(StatusCode::UNPROCESSABLE_ENTITY, format!("{e:#}")),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    }
}
