"""Rejection fine-tuning: behaviour cloning on the best of the policy's own trajectories."""

from __future__ import annotations

from dataclasses import dataclass

from algorithms.base import require_items
from algorithms.behavior_cloning import BehaviorCloning
from algorithms.config import TrainingConfig
from sweetrl_gym.trajectory import Trajectory, TrajectoryBuffer

__all__ = ["RejectionFT", "RejectionFTConfig", "select_trajectories"]


@dataclass(frozen=True)
class RejectionFTConfig(TrainingConfig):
    """Settings of :class:`RejectionFT` (and every :class:`TrainingConfig` setting).

    The paper does not list this baseline's optimiser settings; the defaults follow its
    other stages (learning rate 2e-7, one epoch).

    Attributes:
        select: ``"success"``: every fully successful trajectory (the paper's baseline);
            ``"best_of_k"``: each task's best trajectory whose reward reaches
            ``min_reward`` (uses partial credit when successes are rare).
        min_reward: Lowest reward a ``"best_of_k"`` trajectory may have.

    """

    select: str = "success"
    min_reward: float = 0.0

    def __post_init__(self) -> None:
        super().__post_init__()
        self._check_choice("select", ("success", "best_of_k"))


def select_trajectories(
    buffer: TrajectoryBuffer, *, select: str = "success", min_reward: float = 0.0
) -> TrajectoryBuffer:
    """Pick the trajectories rejection fine-tuning imitates.

    Args:
        buffer: All trajectories.
        select: ``"success"`` or ``"best_of_k"`` (see :class:`RejectionFTConfig`).
        min_reward: Threshold for ``"best_of_k"``.

    Returns:
        The chosen trajectories, in buffer order.

    """
    if select == "success":
        return buffer.filter(lambda t: t.success)
    if select != "best_of_k":
        raise ValueError(f"select must be 'success' or 'best_of_k', got {select!r}")
    best: dict[str, Trajectory] = {}
    for trajectory in buffer:
        kept = best.get(trajectory.task_id)
        if kept is None or trajectory.reward > kept.reward:
            best[trajectory.task_id] = trajectory
    chosen = {id(t) for t in best.values() if t.reward >= min_reward}
    return buffer.filter(lambda t: id(t) in chosen)


class RejectionFT(BehaviorCloning):
    """Rejection fine-tuning (the paper's RFT baseline): behaviour cloning on the best.

    Keeps the successful (or best-of-k) trajectories and trains the policy to imitate
    every one of their agent turns, exactly as :class:`~algorithms.BehaviorCloning` does
    with all of them. A batch is ``batch_size`` trajectories, each one sequence with
    every agent turn's tokens in the loss.

    Example:
        >>> rft = RejectionFT(agent, RejectionFTConfig(learning_rate=1e-5))
        >>> metrics = rft.fit(buffer)     # {"train/loss": ..., "train/num_turns": ...}

    """

    name = "rft"
    label = "RFT"
    config_class = RejectionFTConfig
    config: RejectionFTConfig

    def select(self, buffer: TrajectoryBuffer) -> TrajectoryBuffer:
        """Return the trajectories that pass ``select`` (see :func:`select_trajectories`).

        Raises:
            NothingToFit: If none does.

        """
        kept = select_trajectories(
            buffer, select=self.config.select, min_reward=self.config.min_reward
        )
        require_items(
            kept,
            f"no trajectory of the {len(buffer)} passes select={self.config.select!r}; "
            "collect more (or use select='best_of_k')",
        )
        return kept
