//! Notebooks from outside: `read` shows numbered cells, `notebook_edit`
//! changes one cell, leaving the rest of the file byte for byte, under a
//! checkpoint like any write.

mod common;

use common::{Env, lines, stderr};

const NB: &str = "{\n \"cells\": [\n  {\n   \"cell_type\": \"markdown\",\n   \"id\": \"a1\",\n   \"metadata\": {},\n   \"source\": [\"# Title\"]\n  },\n  {\n   \"cell_type\": \"code\",\n   \"execution_count\": 1,\n   \"id\": \"b2\",\n   \"metadata\": {},\n   \"outputs\": [],\n   \"source\": [\"print(1)\"]\n  }\n ],\n \"metadata\": {},\n \"nbformat\": 4,\n \"nbformat_minor\": 5\n}\n";

#[test]
fn a_cell_is_read_and_replaced_and_the_rest_of_the_file_kept() {
    let env = Env::new();
    let path = env.work.path().join("analysis.ipynb");
    std::fs::write(&path, NB).unwrap();
    let out = env.run(
        "notebook",
        &[
            "--permission-mode",
            "acceptEdits",
            "--output-format",
            "stream-json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let after = std::fs::read_to_string(&path).unwrap();
    let cut = NB.find("  {\n   \"cell_type\": \"code\"").unwrap();
    assert_eq!(&after[..cut], &NB[..cut], "the first cell, byte for byte");
    assert!(after.contains("\"print(2)\\n\""), "{after}");
    assert!(!after.contains("print(1)"), "{after}");
    assert!(after.ends_with(" \"metadata\": {},\n \"nbformat\": 4,\n \"nbformat_minor\": 5\n}\n"));
    let seen = lines(&out);
    let checkpoint = seen.iter().find(|l| l["type"] == "checkpoint").unwrap();
    assert!(
        checkpoint["files"][0]["path"]
            .as_str()
            .unwrap()
            .ends_with("analysis.ipynb"),
        "{checkpoint}"
    );
}
