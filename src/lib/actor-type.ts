/** The kinds of account: a person, a bot, or the service's admin. A session token names one (`typ`). */
export type ActorType = "human" | "bot" | "admin";
