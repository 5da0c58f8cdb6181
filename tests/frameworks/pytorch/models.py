"""Tiny models and a training loop shared by the PyTorch hook tests."""
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, n_in=4, n_hidden=8, n_out=3):
        super().__init__()
        self.fc1 = nn.Linear(n_in, n_hidden)
        self.relu = nn.ReLU()
        self.fc2 = nn.Linear(n_hidden, n_out)

    def forward(self, x):
        return self.fc2(self.relu(self.fc1(x)))


def data(n=16, n_in=4, n_out=3, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, n_in, generator=g), torch.randint(0, n_out, (n,), generator=g)


def train(hook, steps, net=None, lr=0.1, seed=0, record=None):
    """Trains `net` (a new Net by default) for `steps` steps with hook registered on it and on a
    CrossEntropyLoss. record (a dict) receives, per step, the parameters as they were when the
    step started, the gradients autograd computed and the loss."""
    torch.manual_seed(seed)
    net = net or Net()
    crit = nn.CrossEntropyLoss()
    opt = torch.optim.SGD(net.parameters(), lr=lr)
    hook.register_module(net)
    hook.register_loss(crit)
    x, y = data(seed=seed)
    for step in range(steps):
        before = {n: p.detach().clone() for n, p in net.named_parameters()}
        opt.zero_grad()
        loss = crit(net(x), y)
        loss.backward()
        if record is not None:
            record[step] = {"params": before,
                            "grads": {n: p.grad.detach().clone() for n, p in net.named_parameters()},
                            "loss": loss.detach().clone()}
        opt.step()
    return net
