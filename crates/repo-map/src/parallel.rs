//! A parallel map over a slice on scoped threads, keeping the order of the input.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;

/// The most threads used; the work is I/O and parsing of small files.
const MAX_THREADS: usize = 8;

/// Items handed to a thread at a time.
const BATCH: usize = 16;

/// `f` applied to every item, with a per-thread state made by `init` (a parser), in the
/// order of `items`. Small inputs run on the calling thread.
pub fn map<T, S, R, I, F>(items: &[T], init: I, f: F) -> Vec<R>
where
    T: Sync,
    R: Send,
    I: Fn() -> S + Sync,
    F: Fn(&mut S, &T) -> R + Sync,
{
    let threads = thread::available_parallelism()
        .map_or(1, usize::from)
        .min(MAX_THREADS)
        .min(items.len().div_ceil(BATCH));
    if threads <= 1 {
        let mut state = init();
        return items.iter().map(|item| f(&mut state, item)).collect();
    }
    let next = AtomicUsize::new(0);
    let mut done: Vec<(usize, R)> = thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut state = init();
                    let mut out = Vec::new();
                    loop {
                        let start = next.fetch_add(BATCH, Ordering::Relaxed);
                        if start >= items.len() {
                            break out;
                        }
                        let end = (start + BATCH).min(items.len());
                        for (index, item) in items[start..end].iter().enumerate() {
                            out.push((start + index, f(&mut state, item)));
                        }
                    }
                })
            })
            .collect();
        let mut all = Vec::with_capacity(items.len());
        for worker in workers {
            // A worker only panics if `f` does; then so do we, as a sequential map would.
            match worker.join() {
                Ok(part) => all.extend(part),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        all
    });
    done.sort_unstable_by_key(|(index, _)| *index);
    done.into_iter().map(|(_, result)| result).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn keeps_the_order_of_the_input() {
        let items: Vec<usize> = (0..1000).collect();
        let doubled = super::map(
            &items,
            || 0usize,
            |calls, n| {
                *calls += 1;
                n * 2
            },
        );
        assert_eq!(doubled, (0..1000).map(|n| n * 2).collect::<Vec<_>>());
    }
}
