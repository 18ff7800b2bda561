"""Memory of kernel-gym: a persistent, process-safe store of knowledge and experience.

Public API:
    MemoryStore        the store: SQLite (WAL) + sharded faiss index; exact filtered top-K cosine recall.
    MemoryItem         one record (kind, text, title, task/level/category/backend, payload, Q-values, ...).
    MemoryStoreError   raised for corrupt/foreign files, embedder mismatches, closed stores.
    ITEM_KINDS         the item kinds as strings (ItemKind is the Enum).
    HashingEmbedder    offline deterministic default embedder; LiteLLMEmbedder for API models.
    get_embedder       build an embedder from its name ("hashing", "hashing-v1-d512", "litellm:<model>").
    load_seed_knowledge  load a backend's seed knowledge M0 into a store (idempotent).
    StorageBackend     the persistence protocol a database backend implements; SQLiteBackend and
                       PostgresBackend (``MemoryStore("postgresql://...")``, psycopg 3) implement it.

Modules: store (the facade), persistence (backend protocol), sqlite_backend, postgres_backend, index (faiss index),
index_sync (index kept in step with the database), values (Q rule, counters), export (JSON lines),
embedders, types, seed.
"""

from .embedders import Embedder, HashingEmbedder, LiteLLMEmbedder, get_embedder
from .persistence import StorageBackend
from .postgres_backend import PostgresBackend
from .seed import load_seed_knowledge
from .sqlite_backend import SQLiteBackend
from .store import MemoryStore
from .types import ID_REF_KEYS, ITEM_KINDS, ItemKind, MemoryItem, MemoryStoreError

__all__ = [
    "MemoryStore",
    "MemoryItem",
    "MemoryStoreError",
    "ITEM_KINDS",
    "ItemKind",
    "ID_REF_KEYS",
    "Embedder",
    "HashingEmbedder",
    "LiteLLMEmbedder",
    "get_embedder",
    "load_seed_knowledge",
    "StorageBackend",
    "SQLiteBackend",
    "PostgresBackend",
]
