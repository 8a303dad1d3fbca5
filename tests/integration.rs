//! The integration tests, in one binary: one compilation and one link
//! instead of one per file, and every test of every file shares the
//! machine's threads (a fresh clone's `make test` on 2 cores is minutes
//! shorter). Each file is a module named after it; `cargo test NAME`
//! still picks tests by any part of their path (`cargo test
//! tablebase_build::`).

mod common;
mod damage;

mod bad_input;
mod book;
mod cli;
mod damaged_book_store;
mod damaged_engine_books;
mod damaged_engine_tables;
mod damaged_tables;
mod distributed_build;
mod excerpt;
mod formats;
mod import_circles;
mod perft;
mod rank;
mod search;
mod tablebase;
mod tablebase_build;
mod tablebase_improve;
