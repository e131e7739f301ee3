"""The one configuration source: defaults.yaml, a user file, then environment overrides.

    settings = load_settings()
    settings.languages["ja"].tesseract_vertical  # -> "jpn_vert"

Environment overrides use ``ROSETTA__SECTION__KEY`` (double underscores), values are
parsed as YAML so numbers, booleans and ``null`` work.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

DEFAULTS_FILE = Path(__file__).with_name("defaults.yaml")
ENV_PREFIX = "ROSETTA__"


def project_home() -> Path:
    """Where relative paths point: ROSETTA_HOME, else the source checkout, else cwd."""
    if home := os.environ.get("ROSETTA_HOME"):
        return Path(home).expanduser().resolve()
    checkout = Path(__file__).resolve().parents[1]
    if (checkout / "airflow.cfg").exists():
        return checkout
    return Path.cwd()


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LanguageEntry(_Section):
    name: str
    tesseract: str
    tesseract_vertical: str | None = None
    tesseract_vertical_traditional: str | None = None  # Chinese: the model for traditional forms
    chunk_chars: int
    tokenization: str = "word"  # Weaviate tokenizer of the language's lexical property (text_<lang>)
    # Its writers spell ä ö ü out as ae oe ue where a keyboard lacks them: the lexical leg reads
    # both spellings alike (pipeline.stores.lexical.umlauts_read)
    umlauts_spelled_out: bool = False
    # Chinese: a reader of traditional characters asks of simplified text and back; the lexical
    # leg reads both in simplified (pipeline.stores.lexical.simplified)
    traditional_read_as_simplified: bool = False


class LanguageConfig(_Section):
    model: str
    min_confidence: float
    block_min_letters: int
    # Text of at most this many words that fastText reads as an unconfigured language
    # takes the best configured language in its top five (pipeline.text.langid).
    short_text_words: int = 15
    # A document the configured languages cover less than min_confidence of loads its sections
    # in configured languages (pipeline.text.block_languages.configured_sections); false
    # quarantines it whole.
    configured_sections: bool = True


class ExtractionConfig(_Section):
    min_text_layer_chars: int
    ocr_dpi: int
    ocr_max_megapixels: float  # a bigger page is OCRed at the dpi that fits (pipeline.extraction.scans)
    max_pages: int
    # The line recogniser for horizontal text and vertical Chinese (vertical Japanese is
    # always Tesseract jpn_vert): the PP-OCR model in the rapidocr wheel, or PaddleOCR
    # (>= 3.5, onnxruntime engine) on a local model folder (inference.onnx + inference.yml).
    ocr_engine: Literal["rapidocr", "paddleocr"] = "rapidocr"
    paddleocr_model_dir: str | None = None
    ocr_cache_mb: int  # page readings kept by the page's pixels (pipeline/ocr/cache.py); 0: none

    @model_validator(mode="after")
    def _paddleocr_needs_a_folder(self) -> "ExtractionConfig":
        if self.ocr_engine == "paddleocr" and not self.paddleocr_model_dir:
            raise ValueError("extraction.ocr_engine 'paddleocr' needs extraction.paddleocr_model_dir "
                             "(a local recognition model folder with inference.onnx and inference.yml)")
        return self


class CleaningConfig(_Section):
    repeat_min_pages: int
    repeat_min_fraction: float
    garbage_max_symbol_ratio: float
    edge_band: float


class ChunkingConfig(_Section):
    embedder: str  # sentence similarity at chunk boundaries (its own scale: the threshold is tuned for it)
    similarity_threshold: float
    min_chunk_chars: int


class EmbeddingConfig(_Section):
    model: str
    batch_size: int
    cache_mb: int  # passage vectors kept by text (pipeline/embedding/cache.py); 0: none


class NoAnswerConfig(_Section):
    weights: dict[str, float]  # per feature of pipeline/retrieval/refusal.py
    bias: float
    below: float  # probability that the best hit answers, below which search refuses


class NoAnswerModels(_Section):  # one model per query form (refusal.QUERY_FORMS)
    phrase: NoAnswerConfig
    sentence: NoAnswerConfig
    question: NoAnswerConfig


class NoAnswerForms(NoAnswerModels):
    sentence_words: int  # a statement of fewer words is a phrase
    # the best hit has no passage in the query's language (refusal.ACROSS_FEATURES)
    across_languages: NoAnswerModels


class EmbedderTuning(_Section):
    """What benchmarks/tune_retrieval.py chooses for one embedder: a lexical bonus is added to
    a vector similarity and groups are cut at one, so each embedder's scale needs its own."""

    lexical_weight: float
    lexical_rank_offset: int
    lexical_min_match: int
    group_similarity: float
    no_answer: NoAnswerForms
    # by query language: off the vector similarity of a chunk in that language (fusion.fuse); none: 0
    same_language_penalty: dict[str, float] = {}
    # a statement's lexical hit's share of its bonus: floor + (1 - floor) * strength ** power
    # (fusion.fuse); a question's hits take the whole bonus at question_lexical_weight (none:
    # lexical_weight)
    lexical_floor: float = 1.0
    lexical_power: float = 1.0
    question_lexical_weight: float | None = None


class RetrievalConfig(_Section):
    vector_candidates: int
    other_language_candidates: int
    lexical_candidates: int
    embedders: dict[str, EmbedderTuning]  # by embedder name
    golden_set: str
    golden_sha256: str


class AlignmentConfig(_Section):
    registered_model_prefix: str
    alias: str


class AnchorsConfig(_Section):
    root: str
    version: str
    alphas: list[float]
    min_mrr_gain: float
    schedule: str | None
    golden_set: str


class WeaviateConfig(_Section):
    url: str | None
    api_key: str | None
    version: str
    binary_dir: str
    http_port: int
    grpc_port: int
    startup_timeout_s: int
    collection: str
    replication_factor: int
    consistency_level: Literal["ONE", "QUORUM", "ALL"]
    pq_enabled: bool
    pq_min_objects: int
    batch_size: int
    concurrent_requests: int
    max_retries: int


class MlflowConfig(_Section):
    tracking_uri: str | None
    experiment: str


class QaConfig(_Section):
    sample_per_thousand: int
    min_sample: int
    accept_quality: float
    producer_risk: float
    reject_quality: float
    consumer_risk: float
    seed: int


class SyncConfig(_Section):
    max_deleted_fraction: float = Field(0.2, ge=0.0, le=1.0)


class RetentionConfig(_Section):
    """How long a batch's workspace is kept whole (its review window; pipeline.batch.retention)."""
    keep_days: float = Field(ge=0)
    keep_batches: int = Field(ge=0)  # the newest batches that loaded or rolled back, kept whatever their age


class AirflowConfig(_Section):
    corpus_refresh_schedule: str | None
    retries: int
    retry_delay_s: int


class LimitsConfig(_Section):
    """What one document may cost in one stage (pipeline.batch.isolation)."""
    isolate: bool  # run per-document stages in a worker process that can be killed
    base_s: float  # deadline of a document-stage: base_s + per_page_s * pages
    per_page_s: float
    rss_mib: int  # the worker's resident memory cap; past it the document is too_large
    worker_start_s: float  # a fresh worker's start and the stage module's import, outside the deadline
    stale_heartbeat_s: int  # a running batch whose owner has not beaten this long is stale


class ExecutionConfig(_Section):
    mode: Literal["local", "docker", "kubernetes"]


class StageResources(_Section):
    cpu: str
    memory: str


class KubernetesConfig(_Section):
    namespace: str
    workspace_claim: str
    source_claim: str | None
    env_config_map: str
    env_secret: str | None
    service_account: str | None
    image_pull_policy: Literal["Always", "IfNotPresent", "Never"]
    startup_timeout_s: int


class ContainersConfig(_Section):
    registry: str
    image_prefix: str
    tag: str | None
    stages: list[str] | None
    docker_url: str
    network_mode: str
    workspace_volume: str | None
    extra_mounts: list[str]
    resources: dict[str, StageResources]  # overrides of the stage table's cpu/memory, by stage name
    kubernetes: KubernetesConfig

    @model_validator(mode="after")
    def _known_stages(self) -> "ContainersConfig":
        from pipeline.stages import BY_NAME

        unknown = sorted({*self.resources, *(self.stages or [])} - set(BY_NAME))
        if unknown:
            raise ValueError(f"containers: unknown stage(s) {unknown}; stages: {', '.join(BY_NAME)}")
        return self


class Settings(_Section):
    data_root: Path
    source_dir: Path
    source_globs: list[str]
    allowed_source_roots: list[Path]  # besides source_dir, where DAG params may point (batch/discovery)
    secrets_dir: Path | None  # None => <data_root>/secrets (pipeline.stores.secrets)
    reference_language: str
    languages: dict[str, LanguageEntry]
    language: LanguageConfig
    extraction: ExtractionConfig
    cleaning: CleaningConfig
    chunking: ChunkingConfig
    embedding: EmbeddingConfig
    retrieval: RetrievalConfig
    alignment: AlignmentConfig
    anchors: AnchorsConfig
    weaviate: WeaviateConfig
    mlflow: MlflowConfig
    qa: QaConfig
    sync: SyncConfig = SyncConfig()
    retention: RetentionConfig
    airflow: AirflowConfig
    limits: LimitsConfig
    execution: ExecutionConfig
    containers: ContainersConfig

    def stage_resources(self, name: str) -> StageResources:
        """A stage's cpu/memory: the config's override, else the stage table's."""
        from pipeline.stages import stage

        if name in self.containers.resources:
            return self.containers.resources[name]
        spec = stage(name)
        return StageResources(cpu=spec.cpu, memory=spec.memory)

    @property
    def document_registry_path(self) -> Path:
        return self.data_root / "registry.sqlite"

    @property
    def run_logs_path(self) -> Path:
        """The Airflow task log of each `rosetta ingest` / `reprocess` run (one file a run)."""
        return self.data_root / "logs"

    @property
    def embedding_cache_path(self) -> Path:
        return self.data_root / "embedding-cache"

    @property
    def ocr_cache_path(self) -> Path:
        return self.data_root / "ocr-cache"

    @property
    def caches(self) -> dict[str, tuple[Path, int]]:
        """What the data root keeps only to save time, by name: its folder and its size bound
        (MB, 0: off). Trimmed at each batch's finish, deleted whole by an erasure."""
        return {"embedding cache": (self.embedding_cache_path, self.embedding.cache_mb),
                "OCR cache": (self.ocr_cache_path, self.extraction.ocr_cache_mb)}

    @property
    def mlflow_tracking_uri(self) -> str:
        if self.mlflow.tracking_uri:
            return self.mlflow.tracking_uri
        return f"sqlite:///{self.data_root / 'mlflow.db'}"

    @property
    def mlflow_artifact_root(self) -> Path:
        return self.data_root / "mlartifacts"

    @property
    def weaviate_data_path(self) -> Path:
        return self.data_root / "weaviate"

    @property
    def weaviate_node_name_path(self) -> Path:
        """The embedded server's Raft node name, kept beside its data (embedded_server.node_environment)."""
        return self.data_root / "weaviate-node-name"


def _deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _env_overrides(environ: dict[str, str]) -> dict[str, Any]:
    overrides: dict[str, Any] = {}
    for name, raw in environ.items():
        if not name.startswith(ENV_PREFIX):
            continue
        path = [part.lower() for part in name[len(ENV_PREFIX):].split("__") if part]
        node = overrides
        for part in path[:-1]:
            node = node.setdefault(part, {})
        node[path[-1]] = yaml.safe_load(raw) if raw != "" else None
    return overrides


def _resolve(path: Path | str, home: Path) -> Path:
    p = Path(path).expanduser()
    return p if p.is_absolute() else (home / p).resolve()


def load_settings(environ: dict[str, str] | None = None) -> Settings:
    environ = dict(os.environ if environ is None else environ)
    raw = yaml.safe_load(DEFAULTS_FILE.read_text(encoding="utf-8"))
    if user_file := environ.get("ROSETTA_CONFIG"):
        raw = _deep_merge(raw, yaml.safe_load(Path(user_file).read_text(encoding="utf-8")) or {})
    raw = _deep_merge(raw, _env_overrides(environ))
    settings = Settings.model_validate(raw)
    home = Path(environ["ROSETTA_HOME"]).expanduser().resolve() if environ.get("ROSETTA_HOME") else project_home()
    settings.data_root = _resolve(settings.data_root, home)
    settings.source_dir = _resolve(settings.source_dir, home)
    settings.allowed_source_roots = [_resolve(p, home) for p in settings.allowed_source_roots]
    if settings.secrets_dir is not None:
        settings.secrets_dir = _resolve(settings.secrets_dir, home)
    settings.weaviate.binary_dir = str(_resolve(settings.weaviate.binary_dir, home))
    if settings.reference_language not in settings.languages:
        raise ValueError(f"reference_language {settings.reference_language!r} is not in languages")
    return settings


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """Process-wide settings; tests call ``get_settings.cache_clear()`` after changing env."""
    return load_settings()
