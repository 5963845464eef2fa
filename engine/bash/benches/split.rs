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

criterion_group!(benches, split);
criterion_main!(benches);
