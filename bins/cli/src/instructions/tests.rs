use std::fs;
use std::path::{Path, PathBuf};

use super::skills::{Skill, frontmatter, index};
use super::*;

fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

/// A repository at `<tmp>/repo` with a `.git` folder, cox's home at
/// `<tmp>/home/.cox`; all canonical.
struct Fixture {
    _tmp: tempfile::TempDir,
    user_home: PathBuf,
    cox_home: PathBuf,
    repo: PathBuf,
}

impl Fixture {
    fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(tmp.path()).unwrap();
        let user_home = base.join("home");
        let cox_home = user_home.join(".cox");
        let repo = base.join("repo");
        fs::create_dir_all(repo.join(".git")).unwrap();
        fs::create_dir_all(&cox_home).unwrap();
        Self {
            _tmp: tmp,
            user_home,
            cox_home,
            repo,
        }
    }

    fn gather(&self, cwd: &Path) -> Instructions {
        gather(&self.cox_home, Some(&self.user_home), cwd)
    }
}

fn skill_md(name: &str, description: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\nThe body: step one.\n")
}

#[test]
fn files_come_in_order_from_home_then_root_down_to_the_cwd() {
    let f = Fixture::new();
    let sub = f.repo.join("crates/core");
    write(&f.cox_home.join("AGENTS.md"), "mine: be brief\n");
    write(&f.repo.join("AGENTS.md"), "root agents\n");
    write(&f.repo.join("CLAUDE.md"), "root claude\n");
    write(&f.repo.join("crates/AGENTS.md"), "crates agents\n");
    write(&sub.join("CLAUDE.md"), "core claude\n");
    write(&f.repo.join("other/AGENTS.md"), "not on the way\n");
    let got = f.gather(&sub);
    assert_eq!(got.warnings, Vec::<String>::new());
    let headers: Vec<&str> = got
        .text
        .lines()
        .filter_map(|l| l.strip_prefix("## "))
        .collect();
    assert_eq!(
        headers,
        [
            "~/.cox/AGENTS.md",
            "AGENTS.md",
            "CLAUDE.md",
            "crates/AGENTS.md",
            "crates/core/CLAUDE.md"
        ]
    );
    assert!(
        got.text
            .contains("## crates/core/CLAUDE.md\n\ncore claude\n")
    );
    assert!(
        got.text
            .contains("the working directory is `crates/core` inside it")
    );
    assert!(!got.text.contains("not on the way"));
    let tmp = f.repo.parent().unwrap().to_string_lossy().into_owned();
    assert!(!got.text.contains(&tmp), "no absolute path: {}", got.text);
}

#[test]
fn the_text_is_the_same_bytes_every_time() {
    let f = Fixture::new();
    write(&f.repo.join("AGENTS.md"), "run make\n");
    write(
        &f.repo.join(".cox/skills/b/SKILL.md"),
        &skill_md("b", "second"),
    );
    write(
        &f.repo.join(".cox/skills/a/SKILL.md"),
        &skill_md("a", "first"),
    );
    assert_eq!(f.gather(&f.repo), f.gather(&f.repo));
}

#[test]
fn nothing_found_is_an_empty_string() {
    let f = Fixture::new();
    assert_eq!(f.gather(&f.repo), Instructions::default());
}

#[test]
fn outside_a_repository_only_the_cwd_is_read() {
    let f = Fixture::new();
    let loose = f.repo.parent().unwrap().join("loose/deeper");
    write(&loose.join("../AGENTS.md"), "parent, not read\n");
    write(&loose.join("AGENTS.md"), "here\n");
    let got = f.gather(&loose);
    assert!(got.text.contains("## AGENTS.md\n\nhere\n"), "{}", got.text);
    assert!(!got.text.contains("parent"));
    assert!(got.text.contains("relative to the working directory"));
}

#[test]
fn cox_home_elsewhere_is_spelled_by_its_variable() {
    let f = Fixture::new();
    let elsewhere = f.repo.parent().unwrap().join("cox-home");
    write(&elsewhere.join("AGENTS.md"), "mine\n");
    write(
        &elsewhere.join("skills/tidy/SKILL.md"),
        &skill_md("tidy", "Tidy up."),
    );
    let got = gather(&elsewhere, Some(&f.user_home), &f.repo);
    assert!(
        got.text.contains("## $COX_HOME/AGENTS.md\n"),
        "{}",
        got.text
    );
    assert!(got.text.contains("(`$COX_HOME/skills/tidy/SKILL.md`)"));
}

#[test]
fn a_claude_md_linked_to_agents_md_is_shown_once() {
    let f = Fixture::new();
    write(&f.repo.join("AGENTS.md"), "once\n");
    std::os::unix::fs::symlink("AGENTS.md", f.repo.join("CLAUDE.md")).unwrap();
    let got = f.gather(&f.repo);
    assert_eq!(got.text.matches("once").count(), 1, "{}", got.text);
}

#[test]
fn a_file_that_is_not_utf8_is_a_warning_and_left_out() {
    let f = Fixture::new();
    fs::write(f.repo.join("AGENTS.md"), b"caf\xe9\n").unwrap();
    write(&f.repo.join("CLAUDE.md"), "still here\n");
    let got = f.gather(&f.repo);
    assert_eq!(got.warnings.len(), 1, "{:?}", got.warnings);
    assert!(got.warnings[0].contains("AGENTS.md: not UTF-8 text; left out"));
    assert!(!got.text.contains("## AGENTS.md"));
    assert!(got.text.contains("still here"));
}

#[test]
fn a_long_file_is_cut_at_a_line_and_says_so() {
    let line = "x".repeat(99) + "\n";
    let big = line.repeat(500); // 50,000 bytes
    let f = Fixture::new();
    write(&f.repo.join("AGENTS.md"), &big);
    let got = f.gather(&f.repo);
    let body = got.text.split("## AGENTS.md\n\n").nth(1).unwrap();
    let shown = body.split("\n\n[cox: cut here").next().unwrap();
    assert_eq!(shown.len(), 327 * 100 - 1, "whole lines up to 32 KiB");
    assert!(got.text.contains(&format!(
        "only the first {} bytes of this file are shown",
        shown.len()
    )));
}

#[test]
fn a_cut_never_splits_a_character() {
    let text = "é".repeat(10);
    assert_eq!(cut(&text, 5), ("éé", true));
    assert_eq!(cut("ab\ncd", 4), ("ab", true));
    assert_eq!(cut("abc", 3), ("abc", false));
}

#[test]
fn files_past_the_total_are_named_but_left_out() {
    let big = |label: &str| Found {
        label: label.to_owned(),
        text: "y".repeat(FILE_CAP),
        complete: true,
    };
    let files = [big("AGENTS.md"), big("CLAUDE.md"), big("sub/AGENTS.md")];
    let text = render(Place::Folder, &files, "");
    assert_eq!(text.matches(&"y".repeat(FILE_CAP)).count(), 2);
    let last = text.split("## sub/AGENTS.md\n\n").nth(1).unwrap();
    assert!(last.starts_with("[cox: left out: the files above already fill the 64 KiB"));
}

#[test]
fn skills_are_indexed_by_name_without_their_bodies() {
    let f = Fixture::new();
    write(
        &f.repo.join(".cox/skills/zeta/SKILL.md"),
        &skill_md("zeta", "Last."),
    );
    write(
        &f.repo.join(".claude/skills/alpha/SKILL.md"),
        &skill_md("alpha", "First."),
    );
    write(
        &f.cox_home.join("skills/mid/SKILL.md"),
        &skill_md("mid", "Middle."),
    );
    fs::create_dir_all(f.repo.join(".cox/skills/no-skill-file")).unwrap();
    let got = f.gather(&f.repo);
    assert_eq!(got.warnings, Vec::<String>::new());
    let lines: Vec<&str> = got.text.lines().filter(|l| l.starts_with("- ")).collect();
    assert_eq!(
        lines,
        [
            "- `alpha`: First. (`.claude/skills/alpha/SKILL.md`)",
            "- `mid`: Middle. (`~/.cox/skills/mid/SKILL.md`)",
            "- `zeta`: Last. (`.cox/skills/zeta/SKILL.md`)",
        ]
    );
    assert!(!got.text.contains("step one"));
}

#[test]
fn a_malformed_or_shadowed_skill_is_a_warning() {
    let f = Fixture::new();
    write(
        &f.repo.join(".cox/skills/bad/SKILL.md"),
        "no frontmatter here\n",
    );
    write(
        &f.repo.join(".cox/skills/dup/SKILL.md"),
        &skill_md("dup", "Project's."),
    );
    write(
        &f.cox_home.join("skills/dup/SKILL.md"),
        &skill_md("dup", "Mine."),
    );
    let got = f.gather(&f.repo);
    assert_eq!(got.warnings.len(), 2, "{:?}", got.warnings);
    assert!(got.warnings[0].contains("bad/SKILL.md: no frontmatter"));
    assert!(got.warnings[1].contains("skill `dup` is also defined in"));
    assert!(got.text.contains("- `dup`: Project's."));
    assert!(!got.text.contains("Mine."));
    assert!(!got.text.contains("`bad`"));
}

#[test]
fn frontmatter_values_take_the_usual_yaml_shapes() {
    let parse = |t: &str| frontmatter(t);
    assert_eq!(
        parse("---\nname: a\ndescription: plain words\n---\n"),
        Ok(("a".into(), "plain words".into()))
    );
    assert_eq!(
        parse("---\r\nname: \"a\"\r\ndescription: 'it''s quoted'\r\nlicense: MIT\r\n---\r\n"),
        Ok(("a".into(), "it's quoted".into()))
    );
    assert_eq!(
        parse("---\nname: a\ndescription: >-\n  folded over\n  two lines\nother: x\n---\n"),
        Ok(("a".into(), "folded over two lines".into()))
    );
    assert_eq!(
        parse("---\nname: a\ndescription: starts here\n  and goes on\n---\n"),
        Ok(("a".into(), "starts here and goes on".into()))
    );
}

#[test]
fn frontmatter_without_its_parts_is_malformed() {
    let err = |t: &str| frontmatter(t).unwrap_err();
    assert!(err("name: a\n").contains("must start with a line `---`"));
    assert!(err("---\nname: a\ndescription: b\n").contains("not closed"));
    assert!(err("---\ndescription: b\n---\n").contains("no `name:`"));
    assert!(err("---\nname: a\ndescription:\n---\n").contains("no `description:`"));
    let long = "n".repeat(65);
    assert!(err(&format!("---\nname: {long}\ndescription: b\n---\n")).contains("longer than 64"));
}

#[test]
fn a_long_description_is_cut_and_the_index_is_capped() {
    let long = "d".repeat(2000);
    let (_, description) =
        frontmatter(&format!("---\nname: a\ndescription: {long}\n---\n")).unwrap();
    assert_eq!(description.chars().count(), 1025);
    assert!(description.ends_with('…'));
    let many: Vec<Skill> = (0..100)
        .map(|i| Skill {
            name: format!("s{i:03}"),
            description: description.clone(),
            path: format!(".cox/skills/s{i:03}/SKILL.md"),
            file: PathBuf::from(format!("/r/.cox/skills/s{i:03}/SKILL.md")),
        })
        .collect();
    let text = index(&many);
    assert!(text.len() < skills::INDEX_CAP + 1024);
    assert!(text.contains("more skills left out: the index is capped at 16 KiB"));
}

#[test]
fn warnings_escape_control_characters_in_paths() {
    assert_eq!(
        shown(Path::new("/r/\u{1b}[31mred/AGENTS.md")),
        "/r/\\u{1b}[31mred/AGENTS.md"
    );
}
