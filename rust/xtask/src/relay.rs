//! A lossy UDP relay that puts latency, jitter and loss between the processes of a networked suite.
//!
//! A suite with a `# relay:` header gets one relay for the life of its run (see [`crate::harness`]):
//! it listens on its own 127.0.0.1 port and forwards to the suite's server port. Each client source
//! address gets a dedicated upstream socket (an ephemeral port), so the server sees one address per
//! client and its replies go back to the right client. Every datagram, in either direction, is
//! dropped with probability `loss`, or else delivered after `delay_ms ± jitter_ms` (uniform, clamped
//! at 0), so jitter reorders datagrams the way a real network does.
//!
//! The random numbers come from `seed` alone, one stream per path (client × direction), so a path's
//! drop pattern and delays depend only on the order of the datagrams on that path, not on timing.
//!
//! Only datagram transports can go through it: ENet (UDP) works; WebSocket (TCP) does not.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::io::ErrorKind;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use crate::util::Result;

/// The longest one-way delay or jitter a header may ask for, in milliseconds.
const MAX_DELAY_MS: u64 = 60_000;
/// The most distinct client addresses one relay serves; datagrams from more are dropped.
const MAX_CLIENTS: usize = 256;
/// The most datagrams held at once; more are dropped (a runaway sender must not exhaust memory).
const MAX_QUEUED: usize = 100_000;
/// The most datagrams read from one socket before the loop looks at the others.
const READ_BURST: usize = 256;
/// The longest idle sleep of the relay loop.
const IDLE_SLEEP: Duration = Duration::from_millis(1);

/// What a `# relay:` header asks for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RelayConfig {
    /// Base one-way delay of every delivered datagram, in milliseconds.
    pub delay_ms: u64,
    /// Half-width of the uniform jitter added to `delay_ms`, in milliseconds.
    pub jitter_ms: u64,
    /// Probability in [0, 1] that a datagram is dropped.
    pub loss: f64,
    /// Seed of the pseudo-random numbers (drops and jitter).
    pub seed: u64,
}

impl Default for RelayConfig {
    fn default() -> Self {
        RelayConfig {
            delay_ms: 0,
            jitter_ms: 0,
            loss: 0.0,
            seed: 1,
        }
    }
}

impl RelayConfig {
    /// Returns the settings of a header's text after `# relay:`, e.g. `delay_ms=100 loss=0.05`.
    ///
    /// Keys are `delay_ms`, `jitter_ms` (whole milliseconds, at most 60000), `loss` (0 to 1) and
    /// `seed` (an unsigned 64-bit integer); each is optional (defaults 0, 0, 0, 1) and may appear once.
    pub fn parse(text: &str) -> Result<RelayConfig> {
        let mut config = RelayConfig::default();
        let mut seen: Vec<&str> = Vec::new();
        for word in text.split_whitespace() {
            let Some((key, value)) = word.split_once('=') else {
                return Err(format!(
                    "'{word}' is not key=value (keys: delay_ms, jitter_ms, loss, seed)"
                ));
            };
            if seen.contains(&key) {
                return Err(format!("'{key}' is given twice"));
            }
            match key {
                "delay_ms" => config.delay_ms = parse_ms(key, value)?,
                "jitter_ms" => config.jitter_ms = parse_ms(key, value)?,
                "loss" => {
                    config.loss = value
                        .parse::<f64>()
                        .ok()
                        .filter(|l| (0.0..=1.0).contains(l))
                        .ok_or_else(|| {
                            format!("loss={value}: expected a probability from 0 to 1")
                        })?;
                }
                "seed" => {
                    config.seed = value.parse().map_err(|_| {
                        format!("seed={value}: expected an unsigned 64-bit integer")
                    })?;
                }
                _ => {
                    return Err(format!(
                        "unknown key '{key}' (keys: delay_ms, jitter_ms, loss, seed)"
                    ))
                }
            }
            seen.push(key);
        }
        Ok(config)
    }
}

fn parse_ms(key: &str, value: &str) -> Result<u64> {
    value
        .parse::<u64>()
        .ok()
        .filter(|ms| *ms <= MAX_DELAY_MS)
        .ok_or_else(|| {
            format!("{key}={value}: expected whole milliseconds from 0 to {MAX_DELAY_MS}")
        })
}

/// What a relay did, counted over its whole life.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct RelayStats {
    /// Datagrams delivered (in either direction).
    pub forwarded: u64,
    /// Datagrams dropped: by `loss`, or because they could not be sent or queued.
    pub dropped: u64,
    /// Delivered datagrams that left after a datagram received later on the same path.
    pub reordered: u64,
}

/// SplitMix64: a tiny, well-mixed 64-bit generator; enough for test traffic shaping.
#[derive(Debug, Clone)]
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Returns a uniform number in [0, 1).
    fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// One direction of one client's traffic.
struct Path {
    rng: SplitMix64,
    /// Sequence number the next datagram received on this path gets.
    next_seq: u64,
    /// Highest sequence number delivered so far on this path.
    max_delivered: Option<u64>,
}

impl Path {
    fn new(seed: u64, path_id: u64) -> Path {
        // Each path's stream starts from its own well-mixed state derived from the seed.
        let mut mixer = SplitMix64(seed ^ path_id.wrapping_mul(0xD1B5_4A32_D192_ED03));
        Path {
            rng: SplitMix64(mixer.next_u64()),
            next_seq: 0,
            max_delivered: None,
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Direction {
    /// Client → server.
    Up,
    /// Server → client.
    Down,
}

struct Client {
    addr: SocketAddr,
    /// Connected to the server; its ephemeral port is this client's address as the server sees it.
    upstream: UdpSocket,
    up: Path,
    down: Path,
}

impl Client {
    fn path(&mut self, direction: Direction) -> &mut Path {
        match direction {
            Direction::Up => &mut self.up,
            Direction::Down => &mut self.down,
        }
    }
}

/// A datagram waiting for its delivery time.
struct Pending {
    due: Instant,
    /// Arrival order at the relay: keeps datagrams with equal due times first-in, first-out.
    order: u64,
    client: usize,
    direction: Direction,
    seq: u64,
    data: Vec<u8>,
}

impl PartialEq for Pending {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Pending {}

impl PartialOrd for Pending {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Pending {
    /// Reversed, so that `BinaryHeap` (a max-heap) pops the earliest due datagram first.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.due, other.order).cmp(&(self.due, self.order))
    }
}

/// The relay's state, owned by its thread.
struct Shaper {
    config: RelayConfig,
    listener: UdpSocket,
    server: SocketAddr,
    clients: Vec<Client>,
    queue: BinaryHeap<Pending>,
    order: u64,
    stats: RelayStats,
}

impl Shaper {
    /// Returns the index of the client at `addr`, opening its upstream socket on first sight.
    fn client(&mut self, addr: SocketAddr) -> Option<usize> {
        if let Some(i) = self.clients.iter().position(|c| c.addr == addr) {
            return Some(i);
        }
        if self.clients.len() >= MAX_CLIENTS {
            return None;
        }
        let upstream = UdpSocket::bind(("127.0.0.1", 0)).ok()?;
        upstream.connect(self.server).ok()?;
        upstream.set_nonblocking(true).ok()?;
        let id = self.clients.len() as u64;
        self.clients.push(Client {
            addr,
            upstream,
            up: Path::new(self.config.seed, 2 * id),
            down: Path::new(self.config.seed, 2 * id + 1),
        });
        Some(self.clients.len() - 1)
    }

    /// Drops `data` or queues it for delivery on `client`'s `direction` path.
    fn admit(&mut self, client: usize, direction: Direction, data: &[u8], now: Instant) {
        let config = self.config;
        let path = self.clients[client].path(direction);
        let seq = path.next_seq;
        path.next_seq += 1;
        // Always draw both numbers, so a path's stream advances the same way whatever is decided.
        let drop_draw = path.rng.next_f64();
        let jitter_draw = path.rng.next_f64();
        if drop_draw < config.loss || self.queue.len() >= MAX_QUEUED {
            self.stats.dropped += 1;
            return;
        }
        let jitter = (jitter_draw * 2.0 - 1.0) * config.jitter_ms as f64;
        let delay_ms = (config.delay_ms as f64 + jitter).max(0.0);
        self.order += 1;
        self.queue.push(Pending {
            due: now + Duration::from_secs_f64(delay_ms / 1000.0),
            order: self.order,
            client,
            direction,
            seq,
            data: data.to_vec(),
        });
    }

    /// Reads what has arrived from the clients and from the server; returns whether anything did.
    fn receive(&mut self, buf: &mut [u8]) -> bool {
        let mut any = false;
        for _ in 0..READ_BURST {
            match self.listener.recv_from(buf) {
                Ok((n, src)) => {
                    any = true;
                    let now = Instant::now();
                    match self.client(src) {
                        Some(i) => self.admit(i, Direction::Up, &buf[..n], now),
                        None => self.stats.dropped += 1,
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                // A late ICMP error for an earlier datagram: the socket still works.
                Err(_) => continue,
            }
        }
        for i in 0..self.clients.len() {
            for _ in 0..READ_BURST {
                match self.clients[i].upstream.recv(buf) {
                    Ok(n) => {
                        any = true;
                        self.admit(i, Direction::Down, &buf[..n], Instant::now());
                    }
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                    // ConnectionRefused: the server was not listening yet when we sent; ENet resends.
                    Err(_) => continue,
                }
            }
        }
        any
    }

    /// Sends every datagram whose time has come.
    fn deliver(&mut self, now: Instant) {
        while self.queue.peek().is_some_and(|p| p.due <= now) {
            let Some(p) = self.queue.pop() else { break };
            let client = &mut self.clients[p.client];
            let sent = match p.direction {
                Direction::Up => client.upstream.send(&p.data),
                Direction::Down => self.listener.send_to(&p.data, client.addr),
            };
            if sent.is_err() {
                self.stats.dropped += 1;
                continue;
            }
            self.stats.forwarded += 1;
            let path = client.path(p.direction);
            match path.max_delivered {
                Some(max) if p.seq < max => self.stats.reordered += 1,
                _ => path.max_delivered = Some(p.seq),
            }
        }
    }

    fn run(mut self, stop: &AtomicBool) -> RelayStats {
        let mut buf = vec![0u8; 65_536];
        while !stop.load(AtomicOrdering::Relaxed) {
            let received = self.receive(&mut buf);
            let now = Instant::now();
            self.deliver(now);
            if received {
                continue;
            }
            let until_due = self
                .queue
                .peek()
                .map_or(IDLE_SLEEP, |p| p.due.saturating_duration_since(now));
            let nap = until_due.min(IDLE_SLEEP);
            if !nap.is_zero() {
                thread::sleep(nap);
            }
        }
        self.stats
    }
}

/// A running relay; dropping it stops it.
pub struct Relay {
    port: u16,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<RelayStats>>,
}

impl Relay {
    /// Starts a relay thread that serves clients on `listener` and forwards to `server`.
    pub fn start(config: RelayConfig, listener: UdpSocket, server: SocketAddr) -> Result<Relay> {
        let port = listener
            .local_addr()
            .map_err(|e| format!("relay: no local address: {e}"))?
            .port();
        listener
            .set_nonblocking(true)
            .map_err(|e| format!("relay: cannot make its socket non-blocking: {e}"))?;
        let stop = Arc::new(AtomicBool::new(false));
        let shaper = Shaper {
            config,
            listener,
            server,
            clients: Vec::new(),
            queue: BinaryHeap::new(),
            order: 0,
            stats: RelayStats::default(),
        };
        let flag = Arc::clone(&stop);
        let thread = thread::Builder::new()
            .name(format!("relay-{port}"))
            .spawn(move || shaper.run(&flag))
            .map_err(|e| format!("relay: cannot start its thread: {e}"))?;
        Ok(Relay {
            port,
            stop,
            thread: Some(thread),
        })
    }

    /// Returns the 127.0.0.1 port clients dial.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Stops the relay, waits for its thread and returns what it did.
    pub fn stop(mut self) -> RelayStats {
        self.halt()
    }

    fn halt(&mut self) -> RelayStats {
        self.stop.store(true, AtomicOrdering::Relaxed);
        self.thread
            .take()
            .and_then(|t| t.join().ok())
            .unwrap_or_default()
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.halt();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn config(delay_ms: u64, jitter_ms: u64, loss: f64, seed: u64) -> RelayConfig {
        RelayConfig {
            delay_ms,
            jitter_ms,
            loss,
            seed,
        }
    }

    /// A fake server that echoes every datagram back to its sender and records what it saw.
    struct Echo {
        addr: SocketAddr,
        stop: Arc<AtomicBool>,
        thread: JoinHandle<Vec<(SocketAddr, Vec<u8>)>>,
    }

    impl Echo {
        fn start() -> Echo {
            let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
            socket
                .set_read_timeout(Some(Duration::from_millis(5)))
                .unwrap();
            let addr = socket.local_addr().unwrap();
            let stop = Arc::new(AtomicBool::new(false));
            let flag = Arc::clone(&stop);
            let thread = thread::spawn(move || {
                let mut seen = Vec::new();
                let mut buf = [0u8; 2048];
                while !flag.load(AtomicOrdering::Relaxed) {
                    if let Ok((n, src)) = socket.recv_from(&mut buf) {
                        seen.push((src, buf[..n].to_vec()));
                        let _ = socket.send_to(&buf[..n], src);
                    }
                }
                seen
            });
            Echo { addr, stop, thread }
        }

        fn finish(self) -> Vec<(SocketAddr, Vec<u8>)> {
            self.stop.store(true, AtomicOrdering::Relaxed);
            self.thread.join().unwrap()
        }
    }

    fn relay_to(config: RelayConfig, server: SocketAddr) -> Relay {
        Relay::start(config, UdpSocket::bind("127.0.0.1:0").unwrap(), server).unwrap()
    }

    fn client() -> UdpSocket {
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        socket
            .set_read_timeout(Some(Duration::from_millis(5)))
            .unwrap();
        socket
    }

    /// Returns every datagram `socket` receives until nothing came for `quiet`, with its arrival time.
    fn collect(socket: &UdpSocket, quiet: Duration) -> Vec<(u32, Instant)> {
        let mut got = Vec::new();
        let mut last = Instant::now();
        let mut buf = [0u8; 2048];
        while last.elapsed() < quiet {
            if let Ok(n) = socket.recv(&mut buf) {
                assert_eq!(n, 4, "a test datagram is a 4-byte number");
                last = Instant::now();
                got.push((u32::from_le_bytes(buf[..4].try_into().unwrap()), last));
            }
        }
        got
    }

    fn ids(datagrams: &[(SocketAddr, Vec<u8>)]) -> Vec<u32> {
        datagrams
            .iter()
            .map(|(_, d)| u32::from_le_bytes(d[..4].try_into().unwrap()))
            .collect()
    }

    #[test]
    fn parses_every_key() {
        let c = RelayConfig::parse(" delay_ms=100 jitter_ms=20 loss=0.05 seed=7 ").unwrap();
        assert_eq!(c, config(100, 20, 0.05, 7));
    }

    #[test]
    fn missing_keys_take_their_defaults() {
        assert_eq!(RelayConfig::parse("").unwrap(), config(0, 0, 0.0, 1));
        assert_eq!(RelayConfig::parse("loss=1").unwrap(), config(0, 0, 1.0, 1));
        assert_eq!(
            RelayConfig::parse("jitter_ms=5").unwrap(),
            config(0, 5, 0.0, 1)
        );
    }

    #[test]
    fn rejects_bad_headers_with_the_reason() {
        let cases = [
            ("delay=100", "unknown key 'delay'"),
            ("delay_ms", "not key=value"),
            ("delay_ms=-5", "whole milliseconds"),
            ("delay_ms=1.5", "whole milliseconds"),
            ("jitter_ms=60001", "whole milliseconds from 0 to 60000"),
            ("loss=1.5", "probability"),
            ("loss=NaN", "probability"),
            ("loss=-0.1", "probability"),
            ("seed=-1", "unsigned 64-bit"),
            ("seed=1 seed=2", "given twice"),
        ];
        for (text, why) in cases {
            let err = RelayConfig::parse(text).unwrap_err();
            assert!(err.contains(why), "{text}: {err}");
        }
    }

    #[test]
    fn without_loss_delivers_everything_in_order_after_the_delay() {
        let echo = Echo::start();
        let relay = relay_to(config(40, 0, 0.0, 1), echo.addr);
        let client = client();
        let dest = ("127.0.0.1", relay.port());
        let mut sent_at = Vec::new();
        for i in 0u32..50 {
            sent_at.push(Instant::now());
            client.send_to(&i.to_le_bytes(), dest).unwrap();
            thread::sleep(Duration::from_millis(2));
        }
        let got = collect(&client, Duration::from_millis(400));
        let stats = relay.stop();
        let seen = echo.finish();
        let order: Vec<u32> = got.iter().map(|(id, _)| *id).collect();
        assert_eq!(order, (0..50).collect::<Vec<_>>(), "every echo, in order");
        assert_eq!(ids(&seen), order, "the server got every datagram in order");
        for (id, at) in &got {
            let rtt = at.duration_since(sent_at[*id as usize]);
            // 40 ms each way; the upper bound leaves room for a loaded machine.
            assert!(rtt >= Duration::from_millis(80), "{id}: {rtt:?}");
            assert!(rtt < Duration::from_millis(380), "{id}: {rtt:?}");
        }
        assert_eq!(
            stats,
            RelayStats {
                forwarded: 100,
                dropped: 0,
                reordered: 0
            }
        );
    }

    /// Sends `count` numbered datagrams, 1 ms apart, through a relay with `config` to an echo
    /// server; returns the ids the server received, the ids of the echoes the client received
    /// (in arrival order), and the relay's counts.
    fn paced_run(config: RelayConfig, count: u32) -> (Vec<u32>, Vec<u32>, RelayStats) {
        let echo = Echo::start();
        let relay = relay_to(config, echo.addr);
        let client = client();
        for i in 0u32..count {
            client
                .send_to(&i.to_le_bytes(), ("127.0.0.1", relay.port()))
                .unwrap();
            // Paced, so no socket buffer on the way overflows (even on a busy machine) and only the
            // relay drops.
            thread::sleep(Duration::from_millis(1));
        }
        let got = collect(&client, Duration::from_millis(300));
        let stats = relay.stop();
        let seen = ids(&echo.finish());
        (seen, got.into_iter().map(|(id, _)| id).collect(), stats)
    }

    /// Sends 400 numbered datagrams through a relay with `loss`; returns what the server and the
    /// client received, and the relay's counts.
    fn lossy_run(seed: u64) -> (Vec<u32>, Vec<u32>, RelayStats) {
        paced_run(config(0, 0, 0.5, seed), 400)
    }

    #[test]
    fn loss_drops_about_half_with_a_pattern_fixed_by_the_seed() {
        let (seen, got, stats) = lossy_run(42);
        assert!(
            (120..=280).contains(&seen.len()),
            "the server got {} of 400",
            seen.len()
        );
        assert!(
            (seen.len() * 3 / 10..=seen.len() * 7 / 10).contains(&got.len()),
            "{} of {} echoes came back",
            got.len(),
            seen.len()
        );
        assert_eq!(stats.forwarded, (seen.len() + got.len()) as u64);
        assert_eq!(stats.forwarded + stats.dropped, 400 + seen.len() as u64);
        let (seen_again, got_again, stats_again) = lossy_run(42);
        assert_eq!(seen, seen_again, "the same seed drops the same datagrams");
        assert_eq!(got, got_again, "the same seed drops the same echoes");
        assert_eq!(stats, stats_again);
        let (seen_other, _, _) = lossy_run(43);
        assert_ne!(seen, seen_other, "another seed drops other datagrams");
    }

    #[test]
    fn jitter_reorders_datagrams() {
        let (seen, mut delivered, stats) = paced_run(config(20, 15, 0.0, 7), 200);
        let late = delivered.windows(2).filter(|w| w[1] < w[0]).count();
        assert!(late > 0, "some datagram overtook another: {delivered:?}");
        assert!(stats.reordered > 0, "{stats:?}");
        assert!(
            seen.windows(2).any(|w| w[1] < w[0]),
            "reordered on the way up"
        );
        delivered.sort_unstable();
        assert_eq!(delivered, (0..200).collect::<Vec<_>>(), "nothing lost");
        assert_eq!(stats.forwarded, 400);
        assert_eq!(stats.dropped, 0);
    }

    #[test]
    fn each_client_gets_its_own_replies() {
        let echo = Echo::start();
        let relay = relay_to(config(5, 2, 0.0, 3), echo.addr);
        let (a, b) = (client(), client());
        for i in 0u32..20 {
            a.send_to(&i.to_le_bytes(), ("127.0.0.1", relay.port()))
                .unwrap();
            b.send_to(&(1000 + i).to_le_bytes(), ("127.0.0.1", relay.port()))
                .unwrap();
            thread::sleep(Duration::from_millis(1));
        }
        let got_b = thread::spawn(move || collect(&b, Duration::from_millis(200)));
        let got_a = collect(&a, Duration::from_millis(200));
        let got_b = got_b.join().unwrap();
        let stats = relay.stop();
        let seen = echo.finish();
        let mut ids_a: Vec<u32> = got_a.iter().map(|(id, _)| *id).collect();
        let mut ids_b: Vec<u32> = got_b.iter().map(|(id, _)| *id).collect();
        ids_a.sort_unstable();
        ids_b.sort_unstable();
        assert_eq!(ids_a, (0..20).collect::<Vec<_>>());
        assert_eq!(ids_b, (1000..1020).collect::<Vec<_>>());
        let sources: HashSet<SocketAddr> = seen.iter().map(|(src, _)| *src).collect();
        assert_eq!(sources.len(), 2, "the server sees one address per client");
        assert_eq!(stats.forwarded, 80);
    }

    #[test]
    fn generator_is_uniform_enough() {
        let mut rng = SplitMix64(1);
        let draws: Vec<f64> = (0..10_000).map(|_| rng.next_f64()).collect();
        assert!(draws.iter().all(|d| (0.0..1.0).contains(d)));
        let mean = draws.iter().sum::<f64>() / draws.len() as f64;
        assert!((mean - 0.5).abs() < 0.02, "{mean}");
    }
}
