//! The cost of splitting a typical agent command line (issue 3's figure:
//! at most 20 µs for about 100 bytes), with and without the fast path for
//! plain lines.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};

const TYPICAL: &str = "cd src && git status --short | grep '\\.rs$' | head -n 20 && cargo test -p cox-core -- --nocapture";

const NESTED: &str =
    "nohup timeout 5 sh -c 'for f in $(git ls-files); do wc -l \"$f\"; done' | sort -n > /dev/null";

fn split(c: &mut Criterion) {
    c.bench_function("split typical ~100 B", |b| {
        b.iter(|| cox_bash::split(black_box(TYPICAL)));
    });
    // The same line without the fast path for plain lines: the cost of any
    // line with an expansion, a redirect or a keyword.
    c.bench_function("split typical ~100 B, tree-sitter only", |b| {
        b.iter(|| cox_bash::split_tree_sitter(black_box(TYPICAL)));
    });
    c.bench_function("split nested sh -c + $()", |b| {
        b.iter(|| cox_bash::split(black_box(NESTED)));
    });
    c.bench_function("split + segments + line_risk", |b| {
        b.iter(|| {
            let split = cox_bash::split(black_box(TYPICAL));
            (cox_bash::segments(&split), cox_bash::line_risk(&split))
        });
    });
}

/// Hostile lines: the worst cases the split is bounded on. Each is split
/// and made into segments, as the bash tool does.
fn hostile(c: &mut Criterion) {
    let megabyte = format!("ls # {}\nrm -rf x", "y".repeat(1 << 20));
    let heredocs = format!("{}rm x", "cat <<E\nE\n".repeat(5_000));
    let deep = format!("{}rm x{}", "$(".repeat(10_000), ")".repeat(10_000));
    let capped_deep = format!("{}rm x{}", "$(".repeat(5_000), ")".repeat(5_000));
    let evals = format!("{}eval rm x", "eval :; ".repeat(2_000));
    let mut group = c.benchmark_group("hostile");
    group.sample_size(10);
    for (name, line) in [
        ("1 MiB line", &megabyte),
        ("5,000 heredocs", &heredocs),
        ("10,000 nested $(", &deep),
        ("5,000 nested $( (under the cap)", &capped_deep),
        ("2,000 evals", &evals),
    ] {
        group.bench_function(name, |b| {
            b.iter(|| cox_bash::segments(&cox_bash::split(black_box(line))));
        });
    }
    group.finish();
}

criterion_group!(benches, split, hostile);
criterion_main!(benches);
