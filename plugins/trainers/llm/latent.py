"""Latent strategies: map free-text decisions to a few discrete actions (LSPO's abstraction).

Utterances are embedded with a small local encoder and clustered with k-means
(scikit-learn); each cluster is one *latent strategy*, and ``assign`` maps any utterance to
the nearest one. Encoders (nothing is downloaded):

- ``tfidf`` — TF-IDF of character 1–3-grams within words (fitted on the corpus);
- ``hashing`` — the same n-grams hashed into 2^12 dimensions (no vocabulary to fit);
- ``hidden`` — the mean last hidden state of a causal LM (the learner's own model), passed in
  as ``encoder`` (a callable texts -> array).

The number of clusters is chosen per fit by silhouette score within ``[k_min, k_max]``
(capped by the number of distinct utterances), so it is *measured*, not fixed: as the
language policy learns new kinds of utterance the corpus grows and so may the latent space
(LSPO's expansion). Each cluster's representative is its most frequent member nearest the
centroid: it stands for the cluster when an abstract history is rendered back into text.

The fit is deterministic given the corpus (k-means with a fixed seed) and the state is the
corpus itself, so a resumed trainer refits to the same clusters.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Callable, Sequence

import numpy as np

from arena.errors import ArenaError

EMBEDDINGS = ("tfidf", "hashing", "hidden")


def _sklearn() -> Any:
    try:
        import sklearn  # noqa: F401
    except ImportError:
        raise ArenaError("latent strategies need scikit-learn (pip install scikit-learn, or the [llm] extra)") from None
    import sklearn.cluster
    import sklearn.feature_extraction.text
    import sklearn.metrics

    return sklearn


class LatentSpace:
    """Utterance → latent strategy id (see the module docstring)."""

    def __init__(
        self,
        k_min: int = 2,
        k_max: int = 6,
        embedding: str = "tfidf",
        seed: int = 0,
        encoder: Callable[[Sequence[str]], np.ndarray] | None = None,
    ) -> None:
        if embedding not in EMBEDDINGS:
            raise ArenaError(f"latent strategies: embedding must be one of {', '.join(EMBEDDINGS)}, not {embedding!r}")
        if embedding == "hidden" and encoder is None:
            raise ArenaError("latent strategies: embedding 'hidden' needs a model encoder")
        if not 1 <= k_min <= k_max:
            raise ArenaError(f"latent strategies: need 1 <= k_min <= k_max, got k_min={k_min}, k_max={k_max}")
        self.k_min, self.k_max, self.embedding, self.seed = int(k_min), int(k_max), embedding, int(seed)
        self.encoder = encoder
        self.vectorizer: Any = None
        self.kmeans: Any = None
        self.representatives: list[str] = []
        self.sizes: list[int] = []
        self.silhouette = float("nan")

    @property
    def k(self) -> int:
        return len(self.representatives)

    def _embed(self, texts: Sequence[str], fit: bool = False) -> Any:
        sk = _sklearn()
        if self.embedding == "hidden":
            assert self.encoder is not None
            x = np.asarray(self.encoder(list(texts)), dtype=np.float64)
            return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)
        if fit or self.vectorizer is None:
            if self.embedding == "tfidf":
                self.vectorizer = sk.feature_extraction.text.TfidfVectorizer(
                    analyzer="char_wb", ngram_range=(1, 3), lowercase=True
                )
            else:
                self.vectorizer = sk.feature_extraction.text.HashingVectorizer(
                    analyzer="char_wb", ngram_range=(1, 3), n_features=2**12, alternate_sign=False
                )
            return self.vectorizer.fit_transform(list(texts))
        return self.vectorizer.transform(list(texts))

    def fit(self, texts: Sequence[str]) -> "LatentSpace":
        """Cluster ``texts`` (repeats count as weight); choose k by silhouette in [k_min, k_max]."""
        sk = _sklearn()
        counts = Counter(t.strip() for t in texts)
        uniq = sorted(counts)
        if not uniq:
            raise ArenaError("latent strategies: nothing to cluster (no utterances)")
        weight = np.asarray([counts[t] for t in uniq], dtype=np.float64)
        x = self._embed(uniq, fit=True)
        hi = min(self.k_max, len(uniq))
        best: tuple[float, Any] | None = None
        for k in range(min(self.k_min, hi), hi + 1):
            km = sk.cluster.KMeans(n_clusters=k, n_init=4, random_state=self.seed).fit(x, sample_weight=weight)
            labels = km.labels_
            if k == 1 or len(set(labels)) < 2 or len(set(labels)) >= len(uniq):
                score = -1.0 if k > 1 else -0.5
            else:
                score = float(sk.metrics.silhouette_score(x, labels, random_state=self.seed))
            if best is None or score > best[0] + 1e-9:
                best = (score, km)
        assert best is not None
        self.silhouette, self.kmeans = best
        labels = self.kmeans.labels_
        dist = self.kmeans.transform(x)
        reps, sizes = [], []
        for c in range(self.kmeans.n_clusters):
            members = [i for i in range(len(uniq)) if labels[i] == c]
            sizes.append(int(sum(counts[uniq[i]] for i in members)))
            # nearest the centroid, most frequent first among near-ties
            members.sort(key=lambda i: (round(float(dist[i, c]), 6), -counts[uniq[i]], uniq[i]))
            reps.append(uniq[members[0]] if members else "")
        self.representatives, self.sizes = reps, sizes
        return self

    def assign(self, texts: Sequence[str]) -> np.ndarray:
        """The latent id of each utterance (nearest centroid)."""
        if self.kmeans is None:
            raise ArenaError("latent strategies: assign() before fit()")
        if not texts:
            return np.zeros(0, dtype=np.int64)
        return np.asarray(self.kmeans.predict(self._embed([t.strip() for t in texts])), dtype=np.int64)

    def describe(self) -> list[dict[str, Any]]:
        return [
            {"id": c, "size": n, "representative": r} for c, (n, r) in enumerate(zip(self.sizes, self.representatives))
        ]


def hidden_state_encoder(trainable: Any, encode: Callable[[str], list[int]]) -> Callable[[Sequence[str]], np.ndarray]:
    """Mean last-layer hidden state of ``trainable.model`` over each text's tokens."""

    def run(texts: Sequence[str]) -> np.ndarray:
        import torch

        model = trainable.model
        out = []
        with torch.no_grad():
            for t in texts:
                ids = encode(t) or [trainable.pad_id]
                h = model(input_ids=torch.tensor([ids]), output_hidden_states=True).hidden_states[-1][0]
                out.append(h.mean(0).float().numpy())
        return np.stack(out)

    return run
