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

#[test]
fn a_notebook_that_does_not_parse_is_read_as_its_text() {
    let env = Env::new();
    std::fs::write(
        env.work.path().join("broken.ipynb"),
        "<<<<<<< HEAD\n{\"cells\": []}\n=======\n",
    )
    .unwrap();
    let scenario = env.work.path().join("read.toml");
    std::fs::write(
        &scenario,
        "[[turn]]\n[[turn.tool_call]]\nname = \"read\"\ninput = { path = \"broken.ipynb\" }\n[[turn]]\ntext = \"seen\"\n[turn.expect]\ntool_result_contains = \"<<<<<<< HEAD\"\n",
    )
    .unwrap();
    let out = env
        .cox()
        .env("COX_PROVIDER", "scripted")
        .env("COX_SCENARIO", &scenario)
        .args(["run", "-p", "read it", "--output-format", "stream-json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let done = lines(&out)
        .into_iter()
        .find(|l| l["type"] == "tool_call_done")
        .unwrap();
    assert!(
        done["result"]["visible"]
            .as_str()
            .unwrap()
            .starts_with("[not shown as a notebook:"),
        "{done}"
    );
}
