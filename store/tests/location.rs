//! `Store::default_location` reads the environment; alone in its own process so that
//! changing variables races with no other test.

use std::path::PathBuf;

use store::{Store, StoreError};

#[test]
fn default_location_follows_the_environment() {
    std::env::set_var("HOME", "/home/u");
    std::env::set_var("XDG_DATA_HOME", "/data");
    std::env::set_var("POLYTUNE_DB", "postgres://h/db");
    assert_eq!(Store::default_location().unwrap(), PathBuf::from("postgres://h/db"));
    std::env::set_var("POLYTUNE_DB", "");
    assert_eq!(Store::default_location().unwrap(), PathBuf::from("/data/polytune/polytune.db"));
    std::env::set_var("XDG_DATA_HOME", "relative/ignored");
    assert_eq!(
        Store::default_location().unwrap(),
        PathBuf::from("/home/u/.local/share/polytune/polytune.db")
    );
    std::env::remove_var("XDG_DATA_HOME");
    std::env::remove_var("POLYTUNE_DB");
    assert_eq!(
        Store::default_location().unwrap(),
        PathBuf::from("/home/u/.local/share/polytune/polytune.db")
    );
    std::env::remove_var("HOME");
    let err = Store::default_location().unwrap_err();
    assert!(matches!(err, StoreError::NoLocation));
    assert!(err.to_string().contains("set POLYTUNE_DB"));
}
