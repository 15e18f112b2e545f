//! The client seam: the [`LlmClient`] trait and streamed replies.

use std::sync::Arc;

use async_trait::async_trait;
use tokio::sync::mpsc;

use crate::{Chunk, LlmError, LlmRequest, LlmResponse, Result};

/// A language model as the agent sees it: one request in, one reply out.
///
/// Real providers, [`RecordingClient`](crate::RecordingClient),
/// [`ReplayClient`](crate::ReplayClient) and [`FakeClient`](crate::FakeClient) all
/// implement it, so an agent written against `Arc<dyn LlmClient>` runs unchanged against a live
/// model, a recording or a test double.
#[async_trait]
pub trait LlmClient: Send + Sync {
    /// Sends one request and waits for the whole reply.
    ///
    /// # Errors
    ///
    /// Whatever the implementation fails with: a provider error, an exhausted script, a drifted
    /// request.
    async fn complete(&self, request: LlmRequest) -> Result<LlmResponse, LlmError>;

    /// The model this client talks to, as it should appear in a trajectory's `model_name`.
    fn model(&self) -> Option<&str>;

    /// Sends one request and returns the reply as a stream of chunks.
    ///
    /// The default implementation calls [`complete`](LlmClient::complete) and splits the reply
    /// with [`LlmResponse::to_chunks`]; clients of streaming providers override it.
    ///
    /// # Errors
    ///
    /// As for [`complete`](LlmClient::complete); errors during the stream arrive as `Err` items.
    async fn complete_stream(&self, request: LlmRequest) -> Result<ChunkStream, LlmError> {
        let response = self.complete(request).await?;
        Ok(ChunkStream::from_chunks(response.to_chunks()))
    }

    /// Told by [`capture`](crate::capture) that the agent run using this client failed (it
    /// returned `error`, or panicked), so that a client judging the run afterwards can tell a
    /// crash from a regression: [`ReplayClient::finish`](crate::ReplayClient::finish) then
    /// blames the failure, not fewer model calls, for replies never requested.
    ///
    /// The default does nothing; a client that wraps another forwards it.
    fn run_failed(&self, error: &LlmError) {
        let _ = error;
    }
}

/// `LlmClient` for a smart pointer to a client: every method goes to the client it holds.
macro_rules! forward_client {
    ($pointer:ident) => {
        #[async_trait]
        impl<C: LlmClient + ?Sized> LlmClient for $pointer<C> {
            async fn complete(&self, request: LlmRequest) -> Result<LlmResponse, LlmError> {
                (**self).complete(request).await
            }

            fn model(&self) -> Option<&str> {
                (**self).model()
            }

            async fn complete_stream(&self, request: LlmRequest) -> Result<ChunkStream, LlmError> {
                (**self).complete_stream(request).await
            }

            fn run_failed(&self, error: &LlmError) {
                (**self).run_failed(error);
            }
        }
    };
}

forward_client!(Arc);
forward_client!(Box);

/// A streamed reply: chunks arriving over a tokio channel.
#[derive(Debug)]
pub struct ChunkStream {
    receiver: mpsc::Receiver<Result<Chunk>>,
}

impl ChunkStream {
    /// A stream fed through the returned sender; it ends when the sender is dropped.
    pub fn channel(buffer: usize) -> (mpsc::Sender<Result<Chunk>>, ChunkStream) {
        let (sender, receiver) = mpsc::channel(buffer.max(1));
        (sender, ChunkStream { receiver })
    }

    /// A stream that yields `chunks`, in order, then ends.
    pub fn from_chunks(chunks: Vec<Chunk>) -> Self {
        let (sender, stream) = ChunkStream::channel(chunks.len());
        for chunk in chunks {
            // The channel has room for every chunk and its receiver is alive, so this cannot
            // fail; if it did, the stream would merely end early.
            let _ = sender.try_send(Ok(chunk));
        }
        stream
    }

    /// The next chunk, or `None` at the end of the stream.
    pub async fn next(&mut self) -> Option<Result<Chunk>> {
        self.receiver.recv().await
    }

    /// Reads the stream to its end and returns its chunks.
    ///
    /// # Errors
    ///
    /// The first error the stream carried.
    pub async fn collect_chunks(mut self) -> Result<Vec<Chunk>> {
        let mut chunks = Vec::new();
        while let Some(chunk) = self.next().await {
            chunks.push(chunk?);
        }
        Ok(chunks)
    }

    /// Reads the stream to its end and assembles the reply with [`LlmResponse::from_chunks`].
    ///
    /// # Errors
    ///
    /// The first error the stream carried.
    pub async fn collect(self) -> Result<LlmResponse> {
        Ok(LlmResponse::from_chunks(&self.collect_chunks().await?))
    }
}
