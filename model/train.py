"""Train the small GPT from scratch with a fixed seed, then evaluate it against the entropy floor."""

from __future__ import annotations

import math
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
import torch.nn.functional as F

from .config import GPTConfig
from .data import TRAIN_SEED, make_split
from .evaluate import TRAIN_SAMPLE, evaluate_all, facts_known, mechanisms, validation_splits
from .language import Language, vocabulary
from .numpy_gpt import NumpyGPT
from .tokenizer import WordTokenizer, build_tokenizer
from .torch_gpt import TorchGPT
from .weights import DEFAULT_DIR, save_dir


@dataclass
class TrainConfig:
    n_layer: int = 3
    n_head: int = 4
    n_embd: int = 64
    context: int = 32
    position_encoding: str = "sinusoidal"
    steps: int = 3000
    batch_size: int = 64
    lr: float = 3e-3
    embedding_std: float = 0.5      # token identity must not drown under the sin/cos table (norm ~5.7)
    warmup: int = 100
    weight_decay: float = 0.01
    train_streams: int = 30_000
    seed: int = 0
    threads: int = 1              # two threads stall on a shared machine (docs/model.md)
    log_every: int = 10
    record_mechanisms: bool = True   # measure the circuits and directions after training, into metrics.json

    def model_config(self) -> GPTConfig:
        return GPTConfig(vocab_size=len(vocabulary()), n_positions=self.context, n_embd=self.n_embd,
                         n_layer=self.n_layer, n_head=self.n_head, position_encoding=self.position_encoding)


def learning_rate(step: int, tc: TrainConfig) -> float:
    """Linear warm-up, then cosine decay to 10%."""
    if step < tc.warmup:
        return tc.lr * (step + 1) / tc.warmup
    progress = (step - tc.warmup) / max(1, tc.steps - tc.warmup)
    return tc.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))


def optimise(model: TorchGPT, tc: TrainConfig, ids):
    """The training loop (AdamW, the learning-rate schedule, clipping), one step per iteration: yields
    (step, the batch's loss tensor) after each optimiser step. Batches are drawn from `ids` (windows of
    context + 1 token ids) by a generator seeded with tc.seed; the model's initialisation is the caller's
    (torch.manual_seed(tc.seed) before building it). train() and the lab (model/lab.py) both run this loop."""
    decay = [p for n, p in model.named_parameters() if p.requires_grad and p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.requires_grad and p.dim() < 2]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": tc.weight_decay},
                                   {"params": no_decay, "weight_decay": 0.0}], lr=tc.lr, betas=(0.9, 0.98))
    generator = torch.Generator().manual_seed(tc.seed)
    all_ids = torch.from_numpy(ids)
    vocab = model.config.vocab_size
    for step in range(tc.steps):
        for group in optimizer.param_groups:
            group["lr"] = learning_rate(step, tc)
        batch = all_ids[torch.randint(len(all_ids), (tc.batch_size,), generator=generator)]
        logits = model(batch[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, vocab), batch[:, 1:].reshape(-1))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        yield step, loss


def train(tc: TrainConfig, out: Path | None = DEFAULT_DIR, progress=sys.stderr) -> tuple[TorchGPT, dict]:
    started = time.perf_counter()
    torch.manual_seed(tc.seed)
    torch.set_num_threads(tc.threads)
    language = Language()
    train_split = make_split(tc.train_streams, tc.context, TRAIN_SEED, language)
    val = validation_splits(tc.context, language)
    data_seconds = time.perf_counter() - started

    config = tc.model_config()
    model = TorchGPT(config, tc.embedding_std)
    log = []
    for step, loss in optimise(model, tc, train_split.ids):
        if step % tc.log_every == 0 or step == tc.steps - 1:
            log.append({"step": step, "loss": round(loss.item(), 5), "lr": learning_rate(step, tc)})
        if progress and (step % max(1, tc.steps // 20) == 0 or step == tc.steps - 1):
            print(f"step {step + 1:5d}/{tc.steps}  loss {loss.item():.4f}  "
                  f"{time.perf_counter() - started:5.1f}s", file=progress, flush=True)
    train_seconds = time.perf_counter() - started
    tokenizer = WordTokenizer(build_tokenizer(vocabulary()))
    metrics = evaluate_all(model, val)
    metrics.update(facts_known(model, tokenizer, language))
    if tc.record_mechanisms:   # the larger measurement, recorded once; `eval` repeats it on a smaller sample
        analysed = time.perf_counter()
        gpt = NumpyGPT(config, model.export_tensors(), tokenizer)
        metrics.update(mechanisms(gpt, language, TRAIN_SAMPLE["partners_per_person"], TRAIN_SAMPLE["shuffles"]))
        metrics["analysis_seconds"] = round(time.perf_counter() - analysed, 2)
    metrics.update({"train_seconds": round(train_seconds, 2), "data_seconds": round(data_seconds, 2),
                    "n_params": sum(p.numel() for p in model.parameters() if p.requires_grad),
                    "n_params_with_position_table": sum(p.numel() for p in model.parameters()),
                    "train_config": asdict(tc), "torch_version": torch.__version__})
    if out is not None:
        save_dir(out, config, model.export_tensors(), tokenizer,
                 extra_json={"training_log.json": log, "metrics.json": metrics})
    return model, metrics
