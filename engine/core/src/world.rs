//! The outside world a session reaches, named once.
//!
//! A [`World`] gathers the adapters a binary picks at compile time: the
//! model ([`World::Provider`]), the record ([`World::Store`]), the archive
//! of tool outputs ([`World::Archive`]) and the sandbox commands run in
//! ([`World::Sandbox`]). The session and its driver are generic over one
//! `W: World`, so a bound is written in one place, and an adapter to come
//! (checkpoints, hooks, MCP) is one more associated type here rather than
//! one more type parameter on every function of the driver.
//!
//! [`Adapters`] is the plain world: four values, one per trait.

use cox_protocol::{Archive, Provider, Sandbox, Store};

/// The adapters one session runs over.
pub trait World {
    type Provider: Provider;
    type Store: Store;
    type Archive: Archive;
    type Sandbox: Sandbox + 'static;

    /// The model (or the router over several).
    fn provider(&self) -> &Self::Provider;
    /// The session's record: rollout, sessions and ledger.
    fn store(&self) -> &Self::Store;
    /// Where every tool output is kept whole.
    fn archive(&self) -> &Self::Archive;
    /// Where commands run.
    fn sandbox(&self) -> &Self::Sandbox;
}

/// A world made of one value per adapter.
pub struct Adapters<P, S, A, X> {
    pub provider: P,
    pub store: S,
    pub archive: A,
    pub sandbox: X,
}

impl<P, S, A, X> World for Adapters<P, S, A, X>
where
    P: Provider,
    S: Store,
    A: Archive,
    X: Sandbox + 'static,
{
    type Provider = P;
    type Store = S;
    type Archive = A;
    type Sandbox = X;

    fn provider(&self) -> &P {
        &self.provider
    }

    fn store(&self) -> &S {
        &self.store
    }

    fn archive(&self) -> &A {
        &self.archive
    }

    fn sandbox(&self) -> &X {
        &self.sandbox
    }
}
