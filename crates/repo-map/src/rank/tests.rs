use super::*;
use crate::test_files::file;

fn order(files: &[MappedFile], mentioned: &[&str]) -> Vec<String> {
    let mentioned = mentioned.iter().map(|s| (*s).to_owned()).collect();
    (rank(files, &mentioned, "").iter())
        .map(|r| files[r.index].path.clone())
        .collect()
}

#[test]
fn the_most_referenced_file_comes_first_and_unreferenced_files_last_by_path() {
    let files = vec![
        file("z_leaf.rs", &["leaf"], &["Config", "parse"]),
        file("config.rs", &["Config"], &[]),
        file("a_leaf.rs", &["other"], &["Config"]),
        file("b_leaf.rs", &[], &["Config", "parse"]),
        file("parse.rs", &["parse"], &[]),
        file("README.md", &[], &[]),
    ];
    assert_eq!(
        order(&files, &[]),
        [
            "config.rs",
            "parse.rs",
            "README.md",
            "a_leaf.rs",
            "b_leaf.rs",
            "z_leaf.rs"
        ]
    );
    let ranked = rank(&files, &BTreeSet::new(), "");
    assert_eq!((ranked[0].tier, ranked[0].referrers), (Tier::Referenced, 3));
    assert_eq!((ranked[1].tier, ranked[1].referrers), (Tier::Referenced, 2));
    assert!(ranked[2..].iter().all(|r| r.tier == Tier::Other));
}

#[test]
fn mentioned_files_come_first_whatever_their_references() {
    let files = vec![
        file("config.rs", &["Config"], &[]),
        file("main.rs", &[], &["Config"]),
        file("notes.txt", &[], &[]),
    ];
    assert_eq!(
        order(&files, &["notes.txt", "main.rs"]),
        ["main.rs", "notes.txt", "config.rs"]
    );
}

#[test]
fn a_file_used_by_an_important_file_outranks_one_used_by_a_leaf() {
    // core.rs is used by three files; util.rs only by core.rs; misc.rs only by one leaf.
    let files = vec![
        file("core.rs", &["Core"], &["helper"]),
        file("util.rs", &["helper"], &[]),
        file("misc.rs", &["stray"], &[]),
        file("l1.rs", &[], &["Core", "stray"]),
        file("l2.rs", &[], &["Core"]),
        file("l3.rs", &[], &["Core"]),
    ];
    let ranked = order(&files, &[]);
    // util.rs gets all of core.rs's weight, so it may even pass it; both beat misc.rs.
    let mut top = ranked[..2].to_vec();
    top.sort();
    assert_eq!(top, ["core.rs", "util.rs"]);
    assert_eq!(ranked[2], "misc.rs");
}

#[test]
fn a_name_defined_in_many_files_weighs_less_than_a_unique_one() {
    let files = vec![
        file("a.rs", &["make"], &[]),
        file("b.rs", &["make"], &[]),
        file("c.rs", &["make", "unique"], &[]),
        file("user1.rs", &[], &["make"]),
        file("user2.rs", &[], &["unique"]),
    ];
    let edges = reference_edges(&files);
    assert_eq!(
        edges,
        vec![
            (3, 0, 1.0 / 3.0),
            (3, 1, 1.0 / 3.0),
            (3, 2, 1.0 / 3.0),
            (4, 2, 1.0),
        ]
    );
    assert_eq!(order(&files, &[])[0], "c.rs");
}

#[test]
fn references_to_its_own_definitions_do_not_count() {
    let files = vec![
        file("self.rs", &["Me"], &["Me"]),
        file("other.rs", &["You"], &[]),
    ];
    assert!(reference_edges(&files).is_empty());
    assert!(
        rank(&files, &BTreeSet::new(), "")
            .iter()
            .all(|r| r.tier == Tier::Other)
    );
}

#[test]
fn pagerank_sums_to_one_and_favours_the_target_of_every_edge() {
    let scores = pagerank(4, &[(0, 3, 1.0), (1, 3, 1.0), (2, 3, 1.0)]);
    assert!((scores.iter().sum::<f64>() - 1.0).abs() < 1e-9);
    assert!(scores[3] > scores[0] && scores[0] == scores[1] && scores[1] == scores[2]);
    assert!(pagerank(0, &[]).is_empty());
}

#[test]
fn the_order_is_the_same_for_the_same_input() {
    let files: Vec<MappedFile> = (0..50)
        .map(|i| {
            let name = format!("f{i}");
            let uses = [format!("f{}", (i * 7) % 50), format!("f{}", (i * 3) % 50)];
            let uses: Vec<&str> = uses.iter().map(String::as_str).collect();
            file(&format!("m{i}.rs"), &[&name], &uses)
        })
        .collect();
    let first = rank(&files, &BTreeSet::new(), "");
    for _ in 0..5 {
        assert_eq!(rank(&files, &BTreeSet::new(), ""), first);
    }
}

#[test]
fn a_name_defined_in_too_many_files_adds_no_edge() {
    let mut files: Vec<MappedFile> = (0..=MAX_DEFINERS)
        .map(|i| file(&format!("d{i}.rs"), &["run"], &[]))
        .collect();
    files.push(file("user.rs", &[], &["run"]));
    assert!(reference_edges(&files).is_empty());
    files.pop();
    files.push(file("user.rs", &[], &["run"]));
    files.remove(0);
    assert_eq!(reference_edges(&files).len(), MAX_DEFINERS);
}

#[test]
fn a_long_name_of_words_weighs_more_and_a_short_or_private_one_less() {
    let files = vec![
        file("a.rs", &["spawn_blocking"], &[]),
        file("b.rs", &["spawn"], &[]),
        file("c.rs", &["io", "_inner"], &[]),
        file("user.rs", &[], &["_inner", "io", "spawn", "spawn_blocking"]),
    ];
    assert_eq!(
        reference_edges(&files),
        vec![(3, 0, 4.0), (3, 1, 1.0), (3, 2, 0.2)]
    );
}
