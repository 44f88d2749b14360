//! The account-switch verbs: `checkAccountSwitch`, `switchAccount`, and the check a
//! prompt naming another account goes through. The runner does the switch
//! (`runner/accounts_switch.rs`); the accounts port says whether the agent's own session can
//! follow (`Accounts::switch_warning`).

use weft_protocol::{AccountSwitch, ClientEnv};

use crate::env::new_task_id;
use crate::error::KernelError;
use crate::hub::Loom;
use crate::io::Caller;
use crate::runner::{chosen, SessionRunner};

impl Loom {
    /// The account `account` names for `agent`, checked with the accounts port (none:
    /// ambient).
    fn target(&self, agent: &str, account: &str) -> Result<Option<String>, KernelError> {
        let to = chosen(account);
        if let Some(a) = &to {
            self.env
                .accounts
                .check(agent, a)
                .map_err(KernelError::Account)?;
        }
        Ok(to)
    }

    fn plan_switch(
        &self,
        runner: &SessionRunner,
        to: Option<String>,
        client_env: Option<&ClientEnv>,
    ) -> AccountSwitch {
        let record = runner.record();
        let warning = (record.account != to && record.session_id.is_some())
            .then(|| {
                self.env.accounts.switch_warning(
                    &record.agent,
                    record.account.as_deref(),
                    to.as_deref(),
                    client_env,
                )
            })
            .flatten();
        AccountSwitch {
            session_key: record.session_key,
            from: record.account,
            to,
            handover: warning.is_some(),
            warning,
            switched: false,
            task_id: None,
        }
    }

    /// What moving `session_key` to `account` would do; nothing changes.
    pub async fn check_account_switch_as(
        &self,
        caller: &Caller,
        session_key: &str,
        account: &str,
    ) -> Result<AccountSwitch, KernelError> {
        let runner = self.runner(session_key).await?;
        let to = self.target(&runner.record().agent, account)?;
        Ok(self.plan_switch(&runner, to, caller.env.as_deref()))
    }

    /// Moves the idle session `session_key` to `account` from its next turn; see
    /// `ClientRequest::SwitchAccount`.
    pub async fn switch_account_as(
        &self,
        caller: &Caller,
        session_key: &str,
        account: &str,
        resume: bool,
        confirm: bool,
    ) -> Result<AccountSwitch, KernelError> {
        let runner = self.runner(session_key).await?;
        let to = self.target(&runner.record().agent, account)?;
        let mut plan = self.plan_switch(&runner, to.clone(), caller.env.as_deref());
        if plan.warning.is_some() && !confirm {
            return Ok(plan);
        }
        let history = if plan.handover {
            let key = session_key.to_string();
            Some(self.blocking(move |store| store.history(&key)).await?)
        } else {
            None
        };
        let task_id = resume.then(new_task_id);
        runner.switch_account(
            to,
            history.as_deref(),
            task_id.clone().map(|t| (t, caller.env.clone())),
        )?;
        plan.switched = true;
        plan.task_id = task_id;
        Ok(plan)
    }

    /// A prompt to `runner`'s session naming another account than its own: refused
    /// with the warning when the agent's own session cannot follow (confirm with
    /// `switchAccount`, then send the prompt again).
    pub(crate) fn refuse_unconfirmed_switch(
        &self,
        caller: &Caller,
        runner: &SessionRunner,
        account: &str,
    ) -> Result<(), KernelError> {
        let plan = self.plan_switch(runner, chosen(account), caller.env.as_deref());
        match plan.warning {
            Some(w) => Err(KernelError::NeedsConfirmation(w)),
            None => Ok(()),
        }
    }
}
